package wire

import (
	"unicode/utf8"
	"unsafe"
)

// AppendStringContent appends the content of the JSON string that
// Stringify writes for string(s), without its quotes, and returns the
// extended slice. It allocates nothing beyond growing dst, so that a long
// string can be encoded a piece at a time into a buffer that is reused:
// the pieces of one string encode to the string's content as long as none
// ends inside a UTF-8 sequence that the next one completes (see
// IncompleteRuneTail).
//
// Its escapes are encoding/json's without HTML escaping, which Stringify
// uses: " and \ escaped, \b \f \n \r \t for those controls and \u00XX for
// the others, U+2028 and U+2029 as \u2028 and \u2029, and each byte of
// invalid UTF-8 as \ufffd.
func AppendStringContent(dst, s []byte) []byte {
	if len(s) == 0 {
		return dst
	}
	// Read as a string without a copy: appendContent keeps nothing of it.
	return appendContent(dst, unsafe.String(&s[0], len(s)), true)
}

// AppendJSString appends s as the JSON string JavaScript's JSON.stringify
// writes (quotes included), and returns the extended slice: the escapes of
// AppendStringContent, but for U+2028 and U+2029, which are written as
// they are, and invalid UTF-8, which is replaced by U+FFFD, written as it
// is. It is the rule of the frames the DeepSeek Harness peers write, for
// the names and messages a Conn writes itself.
func AppendJSString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendContent(dst, s, false)
	return append(dst, '"')
}

// appendContent is the one loop of AppendStringContent (asGo) and
// AppendJSString (not asGo), which differ only for U+2028, U+2029 and
// invalid UTF-8.
func appendContent(dst []byte, s string, asGo bool) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b >= 0x20 && b != '"' && b != '\\' && b < utf8.RuneSelf {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1 && asGo:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
		case (c == '\u2028' || c == '\u2029') && asGo:
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// IncompleteRuneTail returns how many bytes at the end of b begin a UTF-8
// sequence that b does not complete: bytes that must wait for the next
// piece of a string before AppendStringContent encodes them.
func IncompleteRuneTail(b []byte) int {
	for n := 1; n < utf8.UTFMax && n <= len(b); n++ {
		if c := b[len(b)-n]; utf8.RuneStart(c) {
			if c >= utf8.RuneSelf && !utf8.FullRune(b[len(b)-n:]) {
				return n
			}
			return 0
		}
	}
	return 0
}
