package wire

import (
	"sync"
	"unicode/utf8"
)

// Helpers for readers that validate a value now and then rather than a
// stream of lines, and that read and rewrite the text of its values.

// scanners are the Scanners of ScanValue: a Scanner keeps its nesting
// stack between calls, so reusing them makes validation allocation-free.
var scanners = sync.Pool{New: func() any { return new(Scanner) }}

// ScanValue is Scan without an envelope, with a scanner of its own, safe
// for concurrent use: it validates data as one JSON value (white space
// around it allowed) and reports its kind and nesting depth. It allocates
// nothing unless data is invalid; the *SyntaxError it then returns is its
// own to keep.
func ScanValue(data []byte) (top Kind, depth int, err error) {
	s := scanners.Get().(*Scanner)
	top, depth, e := s.Scan(data, nil)
	var fault *SyntaxError
	if e != nil {
		fault = new(SyntaxError)
		*fault = s.err // a copy: the Scanner's is overwritten by its next use
	}
	scanners.Put(s)
	if fault != nil {
		return Absent, depth, fault
	}
	return top, depth, nil
}

// Compact returns valid, a JSON value that Scan found valid, without the
// white space outside its strings, as encoding/json's Compact writes it.
// It returns valid itself when there is none (the common case: values
// written by a program), and a new slice otherwise.
func Compact(valid []byte) []byte {
	var out []byte // nil until the first white space
	start := 0
	for i := 0; i < len(valid); {
		switch c := valid[i]; {
		case c == '"':
			i, _ = skipString(valid, i)
		case c <= ' ' && isWS(c):
			if out == nil {
				out = make([]byte, 0, len(valid))
			}
			out = append(out, valid[start:i]...)
			i = skipWS(valid, i)
			start = i
		default:
			i++
		}
	}
	if out == nil {
		return valid
	}
	return append(out, valid[start:]...)
}

// AppendUnquoteUTF8 is AppendUnquote with each byte of invalid UTF-8 in
// the string read as U+FFFD, as encoding/json decodes strings. JSON.parse
// never meets such bytes (its input is text, decoded before it parses);
// a reader of bytes that must agree with encoding/json about what a
// string holds, or compare keys that way, uses this.
func AppendUnquoteUTF8(dst, raw []byte) []byte {
	start := len(dst)
	dst = AppendUnquote(dst, raw)
	if utf8.Valid(dst[start:]) {
		return dst
	}
	// Escapes decode to whole UTF-8 sequences, which neither complete nor
	// break a sequence of the raw bytes around them: the faults are those
	// of the raw bytes, and replacing them after unescaping gives what
	// encoding/json gives by replacing them as it goes.
	tail := append([]byte(nil), dst[start:]...)
	dst = dst[:start]
	for i := 0; i < len(tail); {
		r, size := utf8.DecodeRune(tail[i:])
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, tail[i:i+size]...)
		}
		i += size
	}
	return dst
}
