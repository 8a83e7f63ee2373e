package lines

import "unicode/utf8"

// AppendValidUTF8 appends b to dst with every ill-formed UTF-8 sequence
// replaced by U+FFFD, exactly as the WHATWG "utf-8 decode" algorithm (and so
// JavaScript's TextDecoder) does: each maximal subpart of an ill-formed
// sequence becomes one U+FFFD, and the byte that ended it is decoded anew.
// This differs from bytes.ToValidUTF8, which merges runs, and from
// utf8.DecodeRune, which replaces a truncated sequence byte by byte.
func AppendValidUTF8(dst, b []byte) []byte {
	const replacement = "\uFFFD"
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		var need int
		lower, upper := byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c == 0xE0:
			need, lower = 2, 0xA0
		case c == 0xED:
			need, upper = 2, 0x9F
		case c >= 0xE1 && c <= 0xEF:
			need = 2
		case c == 0xF0:
			need, lower = 3, 0x90
		case c == 0xF4:
			need, upper = 3, 0x8F
		case c >= 0xF1 && c <= 0xF3:
			need = 3
		default:
			dst = append(dst, replacement...)
			i++
			continue
		}
		j := i + 1
		ok := true
		for k := 0; k < need; k++ {
			if j >= len(b) || b[j] < lower || b[j] > upper {
				ok = false
				break
			}
			lower, upper = 0x80, 0xBF
			j++
		}
		if ok {
			dst = append(dst, b[i:j]...)
		} else {
			dst = append(dst, replacement...)
		}
		i = j
	}
	return dst
}
