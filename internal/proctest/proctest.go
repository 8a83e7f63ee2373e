// Package proctest tells tests whether a process is gone, so that tests of
// the packages that start child processes check that none is left behind
// in one way.
package proctest

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Gone reports whether the process pid has exited: it no longer exists,
// or it is a zombie waiting to be reaped. It reads /proc, so it works on
// Linux only; it fails the test when /proc cannot be read.
func Gone(tb testing.TB, pid int) bool {
	tb.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil {
		tb.Fatal(err)
	}
	// pid (comm) state ...: comm may hold spaces; the state follows the last ')'.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}
