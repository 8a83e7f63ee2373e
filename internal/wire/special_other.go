//go:build !amd64 || purego

package wire

// Without a vector implementation, indexSpecial scans by words throughout.
const (
	hasBlockScan = false
	blockSize    = 8
)

func indexSpecialBlocks(b []byte) int { panic("unreachable") }
