package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/openrpc/validator"
	"github.com/linerpc/linerpc/sdkproto"
)

var update = flag.Bool("update", false, "rewrite the golden output in testdata")

// TestSchema: dshrpc schema prints the protocol's OpenRPC document as
// testdata/schema.json holds it (go test -update rewrites it), which is
// sdkproto.OpenRPCDocument indented, the same every run; the document it
// prints reads back and compiles into a validator; -h describes it, the
// top-level usage lists it, and an argument is a usage error.
func TestSchema(t *testing.T) {
	r := dshrpc(t, "", "schema")
	r.wantCode(t, exitOK)
	if r.stderr != "" {
		t.Errorf("stderr: %q", r.stderr)
	}
	golden := filepath.Join("testdata", "schema.json")
	if *update {
		if err := os.WriteFile(golden, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if r.stdout != string(want) {
		t.Fatalf("dshrpc schema differs from %s (go test -update rewrites it):\n%s", golden, r.stdout)
	}
	doc, err := json.MarshalIndent(sdkproto.OpenRPCDocument(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(doc, '\n'), want) {
		t.Error("dshrpc schema is not sdkproto.OpenRPCDocument indented")
	}
	if again := dshrpc(t, "", "schema"); again.stdout != r.stdout {
		t.Error("a second run printed other bytes")
	}
	var back openrpc.Document
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	if _, err := validator.New(&back); err != nil {
		t.Fatalf("the document printed does not compile: %v", err)
	}

	r = dshrpc(t, "", "-h")
	wantContains(t, "dshrpc -h", r.stdout, "dshrpc schema", "OpenRPC document")
	for _, args := range [][]string{{"schema", "-h"}, {"help", "schema"}} {
		r = dshrpc(t, "", args...)
		r.wantCode(t, exitOK)
		wantContains(t, "dshrpc "+args[0]+" "+args[1], r.stdout, "Usage: dshrpc schema", "x-dsh-direction", "runtime-to-client")
	}
	r = dshrpc(t, "", "schema", "extra")
	r.wantCode(t, exitUsage)
	wantContains(t, "stderr", r.stderr, `unexpected argument "extra"`, "dshrpc schema -h")
	r = dshrpc(t, "", "schema", "--pretty")
	r.wantCode(t, exitUsage)
	wantContains(t, "stderr", r.stderr, "--pretty")
}
