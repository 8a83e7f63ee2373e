package realruntime

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDirFindsRecipe(t *testing.T) {
	t.Setenv(EnvDir, "")
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "run-runtime.sh")); err != nil {
		t.Errorf("Dir() = %s without run-runtime.sh", dir)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "go.mod")); err != nil {
		t.Errorf("Dir() = %s is not under the module root", dir)
	}
}

func TestAvailableMissing(t *testing.T) {
	t.Setenv(EnvDir, t.TempDir())
	err := Available()
	if err == nil || !strings.Contains(err.Error(), "make realruntime") {
		t.Errorf("Available() = %v, want an error mentioning make realruntime", err)
	}
}

func TestCommandEnvironment(t *testing.T) {
	t.Setenv("DEEPSEEK_API_KEY", "sk-real-key-must-not-leak")
	t.Setenv("DSH_PERMISSION_MODE", "ask")
	home := t.TempDir()
	cmd := Command("http://127.0.0.1:1", home, "DSH_MAX_TOKENS_AS_SUCCESS=false")
	if filepath.Base(cmd.Path) != "run-runtime.sh" || cmd.Dir != home {
		t.Errorf("path %s dir %s", cmd.Path, cmd.Dir)
	}
	for _, want := range []string{"DEEPSEEK_BASE_URL=http://127.0.0.1:1", "DSH_HOME=" + home, "DSH_MAX_TOKENS_AS_SUCCESS=false"} {
		if !slices.Contains(cmd.Env, want) {
			t.Errorf("env lacks %s", want)
		}
	}
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, "DEEPSEEK_API_KEY=") || strings.HasPrefix(kv, "DSH_PERMISSION_MODE=") {
			t.Errorf("inherited %s", kv)
		}
	}
	if _, ok := cmd.Stderr.(*Stderr); !ok || StderrOf(cmd) != "" {
		t.Errorf("stderr not captured")
	}
	cmd.Stderr.Write([]byte("boom"))
	if StderrOf(cmd) != "boom" {
		t.Errorf("StderrOf = %q", StderrOf(cmd))
	}
}
