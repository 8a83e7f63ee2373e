package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestMain lets the test binary play the child, as the program does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		serve()
		return
	}
	os.Exit(m.Run())
}

func TestRunTalksToItsChild(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	runErr := run()
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	if runErr != nil {
		t.Fatal(runErr)
	}
	for _, want := range []string{
		"progress: adding 2 and 3", "2 + 3 = 5 <nil>", "child asks: divide 1 by 4? yes",
		"1 / 4 = 0.25 <nil>", `1 / 0 fails: code 1, "division by zero"`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
