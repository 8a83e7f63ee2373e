//go:build !purego

package wire

// hasBlockScan says indexSpecialBlocks scans with vector instructions: SSE2,
// which every amd64 processor has.
const hasBlockScan = true

// blockSize is the number of bytes indexSpecialBlocks looks at in one step.
const blockSize = 16

// indexSpecialBlocks looks at the whole 16-byte blocks at the start of b and
// returns the index of the first byte among them that is '"', '\\' or a
// control character, or len(b) rounded down to a multiple of 16 if there is
// none. It is implemented in special_amd64.s.
//
//go:noescape
func indexSpecialBlocks(b []byte) int
