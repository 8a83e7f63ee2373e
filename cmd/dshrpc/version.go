package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

const versionUsage = `Usage: dshrpc version

Print the version of this dshrpc binary on one line, as the Go toolchain
recorded it in the binary (runtime/debug.ReadBuildInfo), then exit 0:

  dshrpc VERSION GOVERSION OS/ARCH [vcs.revision=R vcs.time=T vcs.modified=M]

VERSION is the module version the binary was installed at (v0.1.0, say),
the pseudo-version the go command gave a build from a clone
(v0.0.0-20250102150405-0123456789ab, "+dirty" when the clone had
uncommitted changes), or "(devel)" when it recorded none. The vcs fields,
present when the binary was built in a Git checkout, give the commit (its
first 12 hex digits), its time, and whether the checkout had uncommitted
changes. 'dshrpc --version' and 'dshrpc -version' print the same line.
`

func versionCmd(e *env, args []string) int {
	fs := newFlagSet("version")
	pos, code, err := parseArgs(e, "version", versionUsage, fs, args, false)
	if err != nil {
		return code
	}
	if len(pos) > 0 {
		return usageError(e, "version", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	bi, ok := debug.ReadBuildInfo()
	fmt.Fprintln(e.stdout, versionLine(bi, ok))
	return exitOK
}

// versionLine is the line dshrpc version prints for the build information
// bi (ok false when the binary holds none).
func versionLine(bi *debug.BuildInfo, ok bool) string {
	version, goVersion := "(unknown)", runtime.Version()
	if ok && bi != nil {
		version = bi.Main.Version
		if version == "" {
			version = "(devel)"
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
	}
	fields := []string{"dshrpc", version, goVersion, runtime.GOOS + "/" + runtime.GOARCH}
	if ok && bi != nil {
		for _, key := range []string{"vcs.revision", "vcs.time", "vcs.modified"} {
			for _, s := range bi.Settings {
				if s.Key != key || s.Value == "" {
					continue
				}
				value := s.Value
				if key == "vcs.revision" && len(value) > 12 {
					value = value[:12]
				}
				fields = append(fields, key+"="+value)
			}
		}
	}
	return strings.Join(fields, " ")
}
