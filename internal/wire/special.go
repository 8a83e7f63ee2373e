package wire

import (
	"encoding/binary"
	"math/bits"
)

// The bytes that end the plain run of a JSON string: the closing quote, the
// start of an escape, and the control characters a string may not hold.
// Strings are most of the bytes of a typical frame (long text, base64), so
// finding the next one of these is the scanner's inner loop.

// SWAR constants for scanning 8 string bytes at a time.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// minBlockScan is the length from which the rest of a string is handed to
// indexSpecialBlocks: below it, the call costs more than the words it saves.
const minBlockScan = 32

// indexSpecial returns the index of the first byte at or after i in b that is
// '"', '\\' or a control character, or len(b) if there is none.
func indexSpecial(b []byte, i int) int {
	// Most strings are short (member names, ids, enum values): look at the
	// first two words before paying for a call.
	for range 2 {
		if len(b)-i < 8 {
			return indexSpecialBytes(b, i)
		}
		if m := specialMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	if len(b)-i >= minBlockScan && hasBlockScan {
		k := indexSpecialBlocks(b[i:])
		i += k
		if k&(blockSize-1) != 0 || i < len(b) && isSpecial(b[i]) {
			return i
		}
	}
	for len(b)-i >= 8 {
		if m := specialMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	return indexSpecialBytes(b, i)
}

// specialMask has the high bit of every byte of the little-endian word x
// that is '"', '\\' or below 0x20 set, and perhaps of bytes after the first
// such one (a borrow only propagates upward), never of a byte before it.
func specialMask(x uint64) uint64 {
	ctl := (x - 0x20*lsb) &^ x
	q := x ^ ('"' * lsb)
	q = (q - lsb) &^ q
	bs := x ^ ('\\' * lsb)
	bs = (bs - lsb) &^ bs
	return (ctl | q | bs) & msb
}

func isSpecial(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }

func indexSpecialBytes(b []byte, i int) int {
	for ; i < len(b); i++ {
		if isSpecial(b[i]) {
			break
		}
	}
	return i
}
