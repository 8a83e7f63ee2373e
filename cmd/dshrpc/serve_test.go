package main

import "testing"

func TestServeDemoUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--delay", "-1s"}, "--delay must not be negative, not -1s"},
		{[]string{"--delay", "soon"}, `invalid value "soon" for flag --delay`},
		{[]string{"--bogus"}, "flag provided but not defined: --bogus"},
	} {
		r := dshrpc(t, "", append([]string{"serve-demo"}, c.args...)...)
		r.wantCode(t, exitUsage)
		wantContains(t, "serve-demo "+c.args[0], r.stderr, c.want, "Run 'dshrpc serve-demo -h' for usage.")
	}
}
