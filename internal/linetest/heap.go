package linetest

import "runtime"

// LiveHeap returns the bytes of live heap objects after a collection, for
// tests that hold a Conn's memory to a bound: the difference of two calls
// is what the code between them keeps alive.
func LiveHeap() int64 {
	runtime.GC()
	runtime.GC() // the second empties the pools' victim caches

	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
