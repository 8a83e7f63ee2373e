//go:build !unix

package sdkproto

import (
	"errors"
	"os/exec"
	"syscall"
)

// ownGroup does nothing: process groups are a unix notion, so only the
// child itself is signalled.
func ownGroup(*exec.Cmd) bool { return false }

func signalGroup(int, syscall.Signal) error { return errors.ErrUnsupported }

func groupAlive(int) bool { return false }
