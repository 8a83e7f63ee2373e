// Package docstest checks that the programs the README shows build and
// run as shown.
package docstest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goBlock returns the first Go code block of the README after heading.
func goBlock(t *testing.T, readme, heading string) string {
	t.Helper()
	i := strings.Index(readme, heading)
	if i < 0 {
		t.Fatalf("the README has no heading %q", heading)
	}
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(readme[i:])
	if m == nil {
		t.Fatalf("no Go block after %q", heading)
	}
	return m[1]
}

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The rpc tour is a whole program: it runs, and prints what its comments
// say.
func TestReadmeRPCTourRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program: skipped under -short")
	}
	src := goBlock(t, readme(t), "## A tour of `rpc`")
	dir := t.TempDir()
	file := filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// The program is laid over a folder of this module that does not
	// exist, so that it builds with the module's packages and nothing is
	// written into the repository.
	here, err := filepath.Abs("tour")
	if err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(here, "main.go"): file}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "run", "-overlay", overlayFile, "./tour").CombinedOutput()
	if err != nil {
		t.Fatalf("go run of the README's rpc tour: %v\n%s", err, out)
	}
	if got, want := string(out), "progress 100\n5 <nil>\n"; got != want {
		t.Fatalf("the tour printed %q, want %q", got, want)
	}
}

// The sdkproto tour is examples/turn's main function, word for word, so
// that it builds and runs where that example does.
func TestReadmeSDKProtoTourIsExamplesTurn(t *testing.T) {
	src := goBlock(t, readme(t), "## A tour of `sdkproto`")
	example, err := os.ReadFile("../../examples/turn/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(example), src) {
		t.Fatalf("the README's sdkproto tour is not examples/turn/main.go's code:\n%s", src)
	}
}
