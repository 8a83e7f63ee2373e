package rpc

import (
	"errors"
	"strings"
	"testing"
)

// Under test, a broken invariant of a Conn's state panics where it happens,
// instead of hanging a test later.
func init() {
	onViolation = func(msg string) { panic(msg) }
}

// An impossible change of a Conn's state panics where it happens, naming
// what broke.
func TestImpossibleTransitionsPanic(t *testing.T) {
	ended := errors.New("ended")
	for name, bad := range map[string]func(s *state){
		"ended without a reason":  func(s *state) { s.phase = phaseEnded },
		"reason while open":       func(s *state) { s.phase, s.err = phaseOpen, ended },
		"goroutine uncounted":     func(s *state) { s.goroutines = -1 },
		"running below zero":      func(s *state) { s.line.running = -1 },
		"waits with a free slot":  func(s *state) { s.line.slotQ.push(&job{}); s.line.waiting++ },
		"waiting miscounted":      func(s *state) { s.line.held.push(&job{}) },
		"held without a solo one": func(s *state) { s.line.held.push(&job{}); s.line.waiting++ },
		"solo waits for nothing":  func(s *state) { s.line.head = &job{solo: true} },
		"reading before Start":    func(s *state) { s.reading = readHeld },
	} {
		c := NewConn(strings.NewReader(""), discard{}, nil)
		func() {
			defer func() {
				if v := recover(); v == nil {
					t.Errorf("%s: no panic", name)
				} else if msg, _ := v.(string); !strings.HasPrefix(msg, "rpc: ") {
					t.Errorf("%s: panic %v", name, v)
				}
			}()
			c.update(bad)
		}()
	}
	// A valid sequence does not panic.
	c := NewConn(strings.NewReader(""), discard{}, nil)
	c.update(func(s *state) { c.setPhase(s, phaseOpen, nil) })
	c.update(func(s *state) {
		s.line.running = s.line.slots
		s.line.slotQ.push(&job{})
		s.line.waiting++
	})
	c.update(func(s *state) {
		s.line.slotQ.pop()
		s.line.waiting--
		s.line.running = 0
		c.setPhase(s, phaseClosed, ErrClosed)
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
