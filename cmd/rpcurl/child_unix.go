//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// sigTerm is the signal of the ladder's second step.
var sigTerm os.Signal = syscall.SIGTERM

// ownGroup makes cmd start as the leader of a new process group, and
// reports that it will.
func ownGroup(cmd *exec.Cmd) bool {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return true
}

// signalGroup sends sig (sigTerm or os.Kill) to the process group pgid.
func signalGroup(pgid int, sig os.Signal) error {
	return syscall.Kill(-pgid, sig.(syscall.Signal))
}

// groupAlive reports whether the process group pgid has a member left (a
// zombie not yet reaped by its new parent counts).
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
