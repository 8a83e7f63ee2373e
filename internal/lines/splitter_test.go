package lines

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// A line is handed over whole however the stream is cut, cut to Max bytes
// with its full length, and an unterminated last line only by End.
func TestSplitter(t *testing.T) {
	in := "one\n" + strings.Repeat("x", 10) + "\n\nlast"
	for cut := 1; cut <= len(in); cut++ {
		s := Splitter{Max: 4}
		var got []string
		emit := func(pieces [][]byte, size int64) {
			got = append(got, fmt.Sprintf("%s/%d", bytes.Join(pieces, nil), size))
		}
		for i := 0; i < len(in); i += cut {
			s.Split([]byte(in[i:min(i+cut, len(in))]), emit)
		}
		if p := string(bytes.Join(s.Pending(), nil)); p != "last" {
			t.Errorf("cut %d: pending %q", cut, p)
		}
		if !s.End(emit) || s.End(emit) {
			t.Errorf("cut %d: End reports the last line other than once", cut)
		}
		if want := "one/3,xxxx/10,/0,last/4"; strings.Join(got, ",") != want {
			t.Errorf("cut %d: %s, want %s", cut, strings.Join(got, ","), want)
		}
	}
}

// A Tail keeps the last lines, bounds each, drops a trailing CR, shows
// the line being written, and keeps lines added by its owner in order.
func TestTail(t *testing.T) {
	tl := NewTail(3)
	tl.Write([]byte("a\r\nb\nc\nd"))
	if got := strings.Join(tl.Lines(), "|"); got != "b|c|d" {
		t.Errorf("lines %q, want b|c|d", got)
	}
	tl.Flush()
	tl.Add("own")
	if got := strings.Join(tl.Lines(), "|"); got != "c|d|own" {
		t.Errorf("after Flush and Add: %q, want c|d|own", got)
	}
	long := NewTail(2)
	long.Write([]byte(strings.Repeat("y", 3*MaxTailLine)))
	long.Write([]byte("\nz\n"))
	if l := long.Lines(); len(l) != 2 || len(l[0]) != MaxTailLine || l[1] != "z" {
		t.Errorf("a long line kept as %d lines, the first of %d bytes", len(l), len(l[0]))
	}
	if l := NewTail(0); func() []string { l.Write([]byte("a\n")); return l.Lines() }() != nil {
		t.Error("a Tail of 0 lines kept one")
	}
}
