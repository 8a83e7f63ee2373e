// Package realruntime is test support for running the real DeepSeek Harness
// runtime (the pinned npm install under the module's realruntime/ folder) as
// a JSON-RPC peer: newline-delimited frames on its stdin and stdout.
//
// Tests call Available first and fail (or skip) with its error when the
// runtime is not installed or there is no Node to run it on; `make
// realruntime` (realruntime/install.sh) installs it. Node says which node
// binary runs it: realruntime/node.sh chooses, for the launcher and for
// this package alike. Command builds the process; point DEEPSEEK_BASE_URL
// at a fakemodel.Server. The package uses the standard library only.
package realruntime

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// EnvDir names an environment variable that, when set, overrides the
// location of the recipe folder (default: <module root>/realruntime).
const EnvDir = "LINERPC_REALRUNTIME_DIR"

// StampFile is the file, relative to the recipe folder, in which
// install.sh records the sha256 of package.json + package-lock.json after a
// complete install.
const StampFile = "node_modules/.linerpc-install-stamp"

// NodeScript is the script, relative to the recipe folder, that chooses the
// node binary the runtime runs on (see Node).
const NodeScript = "node.sh"

// EnvNode names the environment variable that, when set, is the node
// binary the runtime runs on (it must be Node >= 22.19; see Node).
const EnvNode = "DSH_NODE"

// required lists the installed files the runtime cannot start without; the
// node binary is not among them: Node finds one, installed or not.
var required = []string{
	"run-runtime.sh",
	NodeScript,
	"node_modules/@deepseek-ai/dsh/lib/bin.js",
	"node_modules/@deepseek-ai/dsh-sdk-jsonrpc-server/package.json",
	"node_modules/@deepseek-ai/dsh-base/package.json",
}

// Dir returns the recipe folder: $LINERPC_REALRUNTIME_DIR if set, else the
// realruntime/ folder of the module root, found by walking up from the
// working directory (a test's package directory) to the first go.mod, or
// from this source file when that fails.
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return filepath.Abs(d)
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, start := range starts {
		for d := start; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				rr := filepath.Join(d, "realruntime")
				if _, err := os.Stat(filepath.Join(rr, "run-runtime.sh")); err == nil {
					return rr, nil
				}
				break // module root without a recipe: try the next start
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", errors.New("realruntime: cannot find the realruntime/ folder of the module (walked up to go.mod); set " + EnvDir)
}

// Available reports whether the runtime is installed, runnable and
// current: nil when the recipe folder exists, the needed files are in
// node_modules, Node finds a node binary, and the install stamp matches
// package.json + package-lock.json. Otherwise the error says what is
// missing: to run `make realruntime`, or which Node to install.
func Available() error {
	dir, err := Dir()
	if err != nil {
		return fmt.Errorf("%w (run `make realruntime` to install the real DSH runtime)", err)
	}
	for _, f := range required {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("realruntime: not installed: %s is missing; run `make realruntime` (or %s)",
				filepath.Join(dir, f), filepath.Join(dir, "install.sh"))
		}
	}
	// Before the stamp: where no node can run the runtime, install.sh
	// fails before it writes the stamp, and saying "run make realruntime"
	// again would send the reader round in a circle.
	if _, err := findNode(dir, os.Environ()); err != nil {
		return err
	}
	want, err := lockHash(dir)
	if err != nil {
		return fmt.Errorf("realruntime: %w; run `make realruntime`", err)
	}
	got, err := os.ReadFile(filepath.Join(dir, StampFile))
	if err != nil || strings.TrimSpace(string(got)) != want {
		return fmt.Errorf("realruntime: install in %s is incomplete or does not match package-lock.json; run `make realruntime`", dir)
	}
	return nil
}

// Node returns the node binary that realruntime/run-runtime.sh runs the
// runtime on, as realruntime/node.sh chooses it (run with bash):
//
//  1. $DSH_NODE when set, which must be Node >= 22.19 (else an error: an
//     explicit choice does not fall through);
//  2. else the pinned Node package that npm installed in the recipe
//     folder's node_modules for this machine's os and cpu (linux x64 and
//     arm64, macOS x64 and arm64);
//  3. else node on PATH, when it is >= 22.19.
//
// When none applies the error says so, names this machine's os and cpu,
// and says to install Node >= 22.19 or set DSH_NODE.
func Node() (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	return findNode(dir, os.Environ())
}

// findNode runs dir's node.sh with the environment env (PATH and DSH_NODE
// are what it reads) and returns the node binary it prints, or its message.
// bash is looked up on this process's PATH, not env's, so that a test can
// give node.sh a PATH holding nothing but a fake node.
func findNode(dir string, env []string) (string, error) {
	script := filepath.Join(dir, NodeScript)
	bash, err := exec.LookPath("bash")
	if err != nil {
		return "", fmt.Errorf("realruntime: %s needs bash, which is not on PATH (the runtime's scripts need bash: linux and macOS only)", script)
	}
	cmd := exec.Command(bash, script, dir)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", errors.New(msg)
		}
		return "", fmt.Errorf("realruntime: %s: %v", script, err)
	}
	node := strings.TrimSpace(stdout.String())
	if node == "" {
		return "", fmt.Errorf("realruntime: %s printed no node binary", script)
	}
	return node, nil
}

// lockHash is the sha256 (hex) of package.json followed by
// package-lock.json, as install.sh computes it.
func lockHash(dir string) (string, error) {
	h := sha256.New()
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Command returns an unstarted command that runs realruntime/run-runtime.sh
// (which execs node, so the process's pid is the runtime's) with
// DEEPSEEK_BASE_URL=baseURL and DSH_HOME=dshHome. dshHome should be a fresh
// empty directory (e.g. t.TempDir()); the profile is laid out there, and it
// is also the process's working directory. extraEnv entries ("K=V") are
// applied last and win. Inherited DEEPSEEK_* and DSH_* variables are
// dropped so a real key never reaches the runtime, except DSH_NODE (EnvNode:
// the node binary, which Available checked with the same environment).
//
// Stdin and stdout are left unset for the caller (use StdinPipe and
// StdoutPipe: they carry the frames); Stderr is a *Stderr buffer, read it
// with StderrOf. WaitDelay is set so Wait cannot hang on pipes held by
// grandchildren after the runtime exits.
//
// Command does not check Available; when the recipe folder cannot be
// found the command runs "run-runtime.sh" from PATH and fails to start.
func Command(baseURL, dshHome string, extraEnv ...string) *exec.Cmd {
	dir, err := Dir()
	script := "run-runtime.sh"
	if err == nil {
		script = filepath.Join(dir, "run-runtime.sh")
	}
	cmd := exec.Command(script)
	cmd.Dir = dshHome
	env := make([]string, 0, len(os.Environ())+len(extraEnv)+2)
	for _, kv := range os.Environ() {
		keep := strings.HasPrefix(kv, EnvNode+"=")
		if !keep && (strings.HasPrefix(kv, "DEEPSEEK_") || strings.HasPrefix(kv, "DSH_")) {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "DEEPSEEK_BASE_URL="+baseURL, "DSH_HOME="+dshHome)
	env = append(env, extraEnv...)
	cmd.Env = env
	cmd.Stderr = &Stderr{}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Stderr is a goroutine-safe buffer collecting a runtime's stderr.
type Stderr struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p; it never fails.
func (s *Stderr) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// String returns everything written so far.
func (s *Stderr) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// StderrOf returns the stderr collected for a command made by Command, or
// "" when cmd.Stderr is not a *Stderr.
func StderrOf(cmd *exec.Cmd) string {
	if s, ok := cmd.Stderr.(*Stderr); ok {
		return s.String()
	}
	return ""
}
