package footprint

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const timeout = 5 * time.Minute // generous: the go command on a loaded machine

// goCmd runs the go command in dir, offline: every module it needs is in
// the module cache once the repository's tests build.
func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOSUMDB=off")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("go %s did not return within %s", strings.Join(args, " "), timeout)
	}
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The packages rpc and rpc/transport import, the standard library aside,
// are the module's own and go-json's.
func TestRPCImportsGoJSONAlone(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	deps := goCmd(t, root, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./rpc", "./rpc/transport")
	for _, dep := range strings.Fields(deps) {
		if !strings.HasPrefix(dep, "github.com/linerpc/linerpc/") && !strings.HasPrefix(dep, "github.com/goccy/go-json") {
			t.Errorf("rpc depends on %s", dep)
		}
	}
}

// Writing and serving documents (openrpc) and the DSH protocol (sdkproto,
// which publishes its document) need no JSON Schema validator: only
// openrpc/validator imports one.
func TestDescriptionsImportNoValidator(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	deps := goCmd(t, root, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./openrpc", "./sdkproto", "./rpc/...")
	for _, dep := range strings.Fields(deps) {
		if strings.Contains(dep, "jsonschema") || strings.HasPrefix(dep, "golang.org/x/") || strings.HasSuffix(dep, "/openrpc/validator") {
			t.Errorf("openrpc or sdkproto depends on %s", dep)
		}
	}
	if !strings.Contains(goCmd(t, root, "list", "-deps", "./openrpc/validator"), "github.com/santhosh-tekuri/jsonschema/v6") {
		t.Error("openrpc/validator does not import the validator: this test no longer tests anything")
	}
}

// A module whose program imports rpc requires, after go mod tidy, linerpc
// and go-json alone: openrpc's validator does not reach its go.mod.
func TestAUserOfRPCRequiresGoJSONAlone(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/user\n\ngo 1.26\n\nrequire github.com/linerpc/linerpc v0.0.0\n\nreplace github.com/linerpc/linerpc => " + root + "\n",
		"main.go": `package main

import (
	"os"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

func main() {
	_ = transport.ServeStdio
	rpc.NewConn(os.Stdin, os.Stdout, nil)
}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goCmd(t, dir, "mod", "tidy")
	out := goCmd(t, dir, "mod", "edit", "-json")
	var mod struct{ Require []struct{ Path string } }
	if err := json.Unmarshal([]byte(out), &mod); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range mod.Require {
		got = append(got, r.Path)
	}
	slices.Sort(got)
	if want := []string{"github.com/goccy/go-json", "github.com/linerpc/linerpc"}; !slices.Equal(got, want) {
		gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
		t.Fatalf("a program importing rpc requires %v, want %v\ngo.mod:\n%s", got, want, gomod)
	}
	// The package list, rather than the module graph, is what is built.
	deps := goCmd(t, dir, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
	for _, dep := range strings.Fields(deps) {
		if strings.Contains(dep, "jsonschema") || strings.HasPrefix(dep, "golang.org/x/") {
			t.Errorf("the program builds %s", dep)
		}
	}
}
