// Package footprint holds the test that keeps package rpc's dependencies
// to go-json alone: a program that imports rpc (and not openrpc, whose
// JSON Schema validator is a module of its own) requires nothing else.
package footprint
