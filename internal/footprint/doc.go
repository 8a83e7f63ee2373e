// Package footprint holds the tests that keep dependencies where they are
// earned: a program that imports rpc requires go-json alone, and one that
// writes OpenRPC documents (openrpc) or speaks the DSH protocol (sdkproto)
// does not build a JSON Schema validator, which only openrpc/validator
// imports.
package footprint
