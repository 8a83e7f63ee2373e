// Package linetest holds what the module's own tests need beyond the
// public test kit, rpc/rpctest: a test binary serving as a child process.
package linetest
