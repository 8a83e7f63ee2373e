//go:build unix

package transport

import (
	"os"
	"os/exec"
	"syscall"
)

// sigTerm is the signal of the ladder's second step.
var sigTerm os.Signal = syscall.SIGTERM

// ownGroup makes cmd start as the leader of a new process group, unless
// it already asks for a session of its own (which also makes it a group
// leader) or to join another group; it reports whether the child will
// lead its own group.
func ownGroup(cmd *exec.Cmd) bool {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	switch {
	case a.Setsid:
		return true
	case a.Setpgid && a.Pgid != 0:
		return false
	}
	a.Setpgid, a.Pgid = true, 0
	return true
}

// signalGroup sends sig (sigTerm or os.Kill, both a syscall.Signal here)
// to the process group pgid.
func signalGroup(pgid int, sig os.Signal) error {
	return syscall.Kill(-pgid, sig.(syscall.Signal))
}

// groupAlive reports whether the process group pgid has a member left
// (a zombie not yet reaped by its new parent counts).
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
