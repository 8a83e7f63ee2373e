package wire

import (
	"math/rand/v2"
	"testing"
)

// TestIndexSpecial checks indexSpecial, with its vector block scan, against
// the byte-by-byte definition, for every length up to a few blocks, every
// start, and a special byte of every kind at every position (or none).
func TestIndexSpecial(t *testing.T) {
	specials := []byte{'"', '\\', 0x00, 0x01, 0x0a, 0x1f}
	// Bytes that must not be mistaken for special ones: neighbours of the
	// special values, and bytes with the high bit set (UTF-8).
	plain := []byte{'a', ' ', '!', '#', '[', ']', 0x20, 0x7f, 0x80, 0x9f, 0xa0, 0xc3, 0xdc, 0xe2, 0xff}
	r := rand.New(rand.NewPCG(1, 2))
	const maxLen = 80
	buf := make([]byte, maxLen)
	for n := 0; n <= maxLen; n++ {
		for start := 0; start <= n; start++ {
			for pos := start - 1; pos < n; pos++ { // pos start-1: none
				for range 2 {
					b := buf[:n]
					for k := range b {
						b[k] = plain[r.IntN(len(plain))]
					}
					if pos >= start {
						b[pos] = specials[r.IntN(len(specials))]
						// Specials after the first must not change the answer.
						if pos+1 < n && r.IntN(2) == 0 {
							b[pos+1+r.IntN(n-pos-1)] = specials[r.IntN(len(specials))]
						}
					}
					want := indexSpecialBytes(b, start)
					if got := indexSpecial(b, start); got != want {
						t.Fatalf("indexSpecial(%q, %d) = %d, want %d", b, start, got, want)
					}
				}
			}
		}
	}
}

// TestIndexSpecialBlocks checks the block scan on its own: it looks at
// whole blocks only and finds the first special byte among them.
func TestIndexSpecialBlocks(t *testing.T) {
	if !hasBlockScan {
		t.Skip("no vector block scan on this platform")
	}
	b := make([]byte, 100)
	for k := range b {
		b[k] = 'x'
	}
	if got := indexSpecialBlocks(b); got != 96 {
		t.Fatalf("no special byte: got %d, want 96 (the whole blocks)", got)
	}
	b[97] = '"' // in the tail: not looked at
	if got := indexSpecialBlocks(b); got != 96 {
		t.Fatalf("special byte in the tail: got %d, want 96", got)
	}
	for _, pos := range []int{0, 15, 16, 31, 50, 95} {
		b[pos] = 0x1f
		if got := indexSpecialBlocks(b); got != pos {
			t.Fatalf("control character at %d: got %d", pos, got)
		}
		b[pos] = 'x'
	}
	if got := indexSpecialBlocks(b[:15]); got != 0 {
		t.Fatalf("no whole block: got %d, want 0", got)
	}
}
