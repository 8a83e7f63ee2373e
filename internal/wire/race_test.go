//go:build race

package wire

// raceEnabled: under the race detector, sync.Pool drops some of what it
// is given, so that pooled paths allocate now and then.
const raceEnabled = true
