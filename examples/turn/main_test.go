package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

func TestMainStreamsAndRuns(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	main()
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	want := "hello there\nsubagent said: count to three (completed, "
	if !strings.HasPrefix(string(out), want) {
		t.Fatalf("output %q, want it to start with %q", out, want)
	}
}
