package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// versionRE is the line dshrpc version prints.
var versionRE = regexp.MustCompile(`^dshrpc (\(devel\)|v\S+) go\S+ ` + regexp.QuoteMeta(runtime.GOOS+"/"+runtime.GOARCH) +
	`( vcs\.revision=([0-9a-f]{12}))?( vcs\.time=\S+)?( vcs\.modified=(true|false))?\n$`)

// TestVersion: dshrpc version, --version and -version print the same one
// line and exit 0; the top-level usage mentions the command, and
// version -h describes the line.
func TestVersion(t *testing.T) {
	first := dshrpc(t, "", "version")
	first.wantCode(t, exitOK)
	if !versionRE.MatchString(first.stdout) || first.stderr != "" {
		t.Fatalf("dshrpc version printed %q, stderr %q; want a line matching %s", first.stdout, first.stderr, versionRE)
	}
	for _, spelling := range []string{"--version", "-version"} {
		r := dshrpc(t, "", spelling)
		r.wantCode(t, exitOK)
		if r.stdout != first.stdout {
			t.Errorf("dshrpc %s printed %q, dshrpc version %q", spelling, r.stdout, first.stdout)
		}
	}
	r := dshrpc(t, "", "-h")
	wantContains(t, "dshrpc -h", r.stdout, "dshrpc version", "(also --version)")
	r = dshrpc(t, "", "version", "-h")
	r.wantCode(t, exitOK)
	wantContains(t, "dshrpc version -h", r.stdout, "Usage: dshrpc version", "vcs.revision")
	r = dshrpc(t, "", "version", "extra")
	r.wantCode(t, exitUsage)
	wantContains(t, "stderr", r.stderr, `unexpected argument "extra"`)
}

// TestVersionFromAClone: a binary built in this Git checkout with its
// VCS stamp (go build -buildvcs=true, whatever GOFLAGS says) names the
// commit it was built from, a commit of this repository, and a
// pseudo-version from it.
func TestVersionFromAClone(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git command: the go command records no commit without it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	exe := filepath.Join(t.TempDir(), "dshrpc")
	build := exec.CommandContext(ctx, "go", "build", "-buildvcs=true", "-o", exe, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, exe, "version").Output()
	if err != nil {
		t.Fatalf("dshrpc version: %v", err)
	}
	m := versionRE.FindStringSubmatch(string(out))
	if m == nil || m[3] == "" || m[4] == "" || m[5] == "" {
		t.Fatalf("dshrpc version printed %q; want a version with vcs.revision, vcs.time and vcs.modified", out)
	}
	if !strings.HasPrefix(m[1], "v0.0.0-") || !strings.Contains(m[1], m[3]) {
		t.Errorf("version %q is not the pseudo-version of commit %s", m[1], m[3])
	}
	if err := exec.CommandContext(ctx, git, "cat-file", "-e", m[3]+"^{commit}").Run(); err != nil {
		t.Errorf("vcs.revision=%s is not a commit of this repository: %v", m[3], err)
	}
}

// TestVersionLine: the line for what ReadBuildInfo may return.
func TestVersionLine(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	rev := "0123456789abcdef0123456789abcdef01234567"
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"installed", &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v0.1.0"}}, true,
			"dshrpc v0.1.0 go1.26.1 " + platform},
		{"clone", &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.modified", Value: "true"}, {Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2025-01-02T15:04:05Z"},
		}}, true, "dshrpc (devel) go1.26.1 " + platform + " vcs.revision=0123456789ab vcs.time=2025-01-02T15:04:05Z vcs.modified=true"},
		{"no version", &debug.BuildInfo{GoVersion: "go1.26.1"}, true, "dshrpc (devel) go1.26.1 " + platform},
		{"no build info", nil, false, "dshrpc (unknown) " + runtime.Version() + " " + platform},
	} {
		if got := versionLine(c.bi, c.ok); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
