//go:build !unix

package main

import (
	"errors"
	"os"
	"os/exec"
)

// sigTerm is the signal of the ladder's second step: where there is no
// SIGTERM, an interrupt (Windows refuses it, and the ladder goes on to
// os.Kill at once).
var sigTerm = os.Interrupt

// ownGroup does nothing: process groups are a unix notion, so only the
// child itself is signalled.
func ownGroup(*exec.Cmd) bool { return false }

func signalGroup(int, os.Signal) error { return errors.ErrUnsupported }

func groupAlive(int) bool { return false }
