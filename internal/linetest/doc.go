// Package linetest holds what the module's own tests need beyond the
// public test kit, rpc/rpctest, written once here rather than in each
// package's tests: a test binary serving as a child process
// (ServeAsChild), the bounded wait for an event (Within), the live heap
// (LiveHeap), and the echo fixtures: a method, its registry, a call on
// its own goroutine, and a handler that blocks until released (Blocker).
package linetest
