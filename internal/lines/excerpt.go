package lines

import (
	"bytes"
	"unicode/utf8"
)

// ExcerptRunes is the most runes an excerpt holds.
const ExcerptRunes = 120

// excerptMax is the most bytes Excerpt looks at: at least ExcerptRunes+1
// runes, however they are encoded.
const excerptMax = 4 * (ExcerptRunes + 1)

// Excerpt shortens a line (or a value) for a message: valid UTF-8 of at
// most ExcerptRunes runes, the last an ellipsis when b was cut. It looks
// only at the first few hundred bytes of b, however long b is.
func Excerpt(b []byte) string {
	if len(b) > excerptMax {
		b = b[:excerptMax]
	}
	s := string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	if utf8.RuneCountInString(s) > ExcerptRunes {
		s = string([]rune(s)[:ExcerptRunes-1]) + "…"
	}
	return s
}
