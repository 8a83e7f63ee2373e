package wire

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// stringified is Stringify's encoding of string(s), without the quotes.
func stringified(t interface{ Fatal(...any) }, s []byte) []byte {
	want, err := Stringify(string(s))
	if err != nil {
		t.Fatal(err)
	}
	return want[1 : len(want)-1]
}

// Every byte, alone and after a multibyte character, and the characters
// Stringify escapes, are encoded as Stringify encodes them.
func TestAppendStringContent(t *testing.T) {
	var cases [][]byte
	for b := range 256 {
		cases = append(cases, []byte{byte(b)}, []byte{'a', byte(b), 'z'}, append([]byte("é"), byte(b)))
	}
	cases = append(cases, []byte("a\u2028b\u2029c"), []byte("<b>&</b> \"q\" \\"), []byte("\xe2\x82"), []byte("\xe2\x82\xacx\xf0\x9f"), []byte{})
	for _, s := range cases {
		if got, want := AppendStringContent(nil, s), stringified(t, s); !bytes.Equal(got, want) {
			t.Errorf("AppendStringContent(%q) = %s, want %s", s, got, want)
		}
	}
}

// Any bytes, cut into pieces anywhere, encode as the whole string does
// when each cut waits for the bytes of an incomplete UTF-8 sequence.
func TestAppendStringContentPieces(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.SliceOf(rapid.SampledFrom([]byte("a\"\\\n\x01\x7f\xc3\xa9\xe2\x80\xa8\x82\xf0\x9f\x98\x80"))).Draw(t, "s")
		cuts := rapid.SliceOfN(rapid.IntRange(0, len(s)), 0, 4).Draw(t, "cuts")
		var got, carry []byte
		prev := 0
		for _, c := range append(cuts, len(s)) {
			if c < prev {
				continue
			}
			piece := append(carry, s[prev:c]...)
			keep := 0
			if c < len(s) {
				keep = IncompleteRuneTail(piece)
			}
			got = AppendStringContent(got, piece[:len(piece)-keep])
			carry = append([]byte(nil), piece[len(piece)-keep:]...)
			prev = c
		}
		if want := stringified(t, s); !bytes.Equal(got, want) {
			t.Fatalf("pieces cut at %v of %q: %s, want %s", cuts, s, got, want)
		}
	})
}

// The incomplete tail is the start of a sequence the bytes do not finish,
// never a whole character nor a byte that starts none.
func TestIncompleteRuneTail(t *testing.T) {
	for s, want := range map[string]int{
		"":                 0,
		"abc":              0,
		"é":                0,
		"a\xc3":            1,
		"a\xe2\x82":        2,
		"\xf0\x9f\x98":     3,
		"\xf0\x9f\x98\x80": 0,
		"\x82":             0,
		"a\x82\x82":        0,
	} {
		if got := IncompleteRuneTail([]byte(s)); got != want {
			t.Errorf("IncompleteRuneTail(%q) = %d, want %d", s, got, want)
		}
		if got := IncompleteRuneTail([]byte(s)); got > 0 && utf8.FullRune([]byte(s)[len(s)-got:]) {
			t.Errorf("IncompleteRuneTail(%q) = %d: a full rune", s, got)
		}
	}
}

// AppendJSString writes what JSON.stringify writes: the escapes of
// AppendStringContent, but U+2028 and U+2029 as they are, and invalid
// UTF-8 as U+FFFD as it is.
func TestAppendJSString(t *testing.T) {
	for in, want := range map[string]string{
		"":                   `""`,
		"plain":              `"plain"`,
		`q"b\`:               `"q\"b\\"`,
		"\n\r\t\b\f\x01\x1f": `"\n\r\t\b\f\u0001\u001f"`,
		"<&>é✓":              `"<&>é✓"`,
		"a\u2028b\u2029c":    "\"a\u2028b\u2029c\"",
		"x\xffy\xc3":         "\"x\uFFFDy\uFFFD\"",
	} {
		if got := string(AppendJSString(nil, in)); got != want {
			t.Errorf("AppendJSString(%q) = %s, want %s", in, got, want)
		}
	}
}
