package linetest

import "github.com/linerpc/linerpc/rpc/rpctest"

// The test kit moved to rpc/rpctest; these names remain while tests move.
type (
	Peer         = rpctest.Peer
	Request      = rpctest.Request
	Recorder     = rpctest.Recorder
	LockedBuffer = rpctest.LockedBuffer
	ChunkReader  = rpctest.ChunkReader
)

const MaxWait = rpctest.MaxWait

var (
	NewPeer      = rpctest.NewPeer
	Attach       = rpctest.Attach
	ParseRequest = rpctest.ParseRequest
	CheckNoLeak  = rpctest.CheckNoLeak
	Chunks       = rpctest.Chunks
	Cut          = rpctest.Cut
)
