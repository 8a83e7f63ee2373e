package proctest

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

func TestGone(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if Gone(t, os.Getpid()) {
		t.Fatal("this process is gone")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if !Gone(t, cmd.Process.Pid) {
		t.Fatal("a reaped child is not gone")
	}
}
