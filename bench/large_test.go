package bench

import "testing"

// Workload 4: one call with a 1 MiB base64 string param ({"data":"..."}),
// decoded into Blob on the server and checked, answered {"messageId":"m-1"}.
// alloc-x-payload is the bytes allocated per call (both ends) over the
// payload size: the "≤ 3× the payload" target.
func BenchmarkLarge(b *testing.B) {
	forEach(b, func(b *testing.B, kind string, c *contender) {
		_, cl, stop := c.connect(kind, &handlers{blob: serveBlob})
		defer stop()
		p := Blob{Data: blobData}
		b.SetBytes(blobSize)
		b.ReportAllocs()
		mem, cpu := startMem(), startCPU()
		for b.Loop() {
			if err := checkReply(cl.callBlob(bg, &p)); err != nil {
				b.Fatal(err)
			}
		}
		cpu.stop(b)
		_, bytes := mem.stop(b.N)
		b.ReportMetric(bytes/blobSize, "alloc-x-payload")
	})
}
