package lines

import "unicode/utf8"

// TrimSpace removes leading and trailing white space as ECMAScript's
// String.prototype.trim defines it: the ASCII white space characters, CR and
// LF, U+00A0, U+FEFF, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F
// and U+3000. Unlike bytes.TrimSpace it removes U+FEFF (a byte order mark)
// and keeps U+0085, because the peers this package talks to trim that way.
// The result is a sub-slice of b.
func TrimSpace(b []byte) []byte {
	for len(b) > 0 {
		c := b[0]
		if c < utf8.RuneSelf {
			if !asciiSpace(c) {
				break
			}
			b = b[1:]
			continue
		}
		r, n := utf8.DecodeRune(b)
		if !isSpace(r) {
			break
		}
		b = b[n:]
	}
	for len(b) > 0 {
		c := b[len(b)-1]
		if c < utf8.RuneSelf {
			if !asciiSpace(c) {
				break
			}
			b = b[:len(b)-1]
			continue
		}
		r, n := utf8.DecodeLastRune(b)
		if !isSpace(r) {
			break
		}
		b = b[:len(b)-n]
	}
	return b
}

func asciiSpace(c byte) bool {
	switch c {
	case '\t', '\n', '\v', '\f', '\r', ' ':
		return true
	}
	return false
}

// isSpace reports whether the non-ASCII rune r is ECMAScript white space or a
// line terminator.
func isSpace(r rune) bool {
	switch r {
	case 0x00A0, 0xFEFF, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}
