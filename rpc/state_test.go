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
		"ended without a reason": func(s *state) { s.phase = phaseEnded },
		"reason while open":      func(s *state) { s.phase, s.err = phaseOpen, ended },
		"goroutine uncounted":    func(s *state) { s.goroutines = -1 },
		"slots over the bound":   func(s *state) { s.in.active = s.in.slots + 1 },
		"waits with a free slot": func(s *state) { s.in.waiting.push(&job{}) },
		"stuck beyond active":    func(s *state) { s.in.stuck = s.in.active + 1 },
		"held without a barrier": func(s *state) { s.in.held.push(&job{}) },
		"exclusive beside others": func(s *state) {
			s.in.barrier, s.in.active = &job{started: true, holds: true}, 2
		},
		"reading before Start": func(s *state) { s.reading = true },
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
		s.in.active = s.in.slots
		s.in.waiting.push(&job{})
	})
	c.update(func(s *state) {
		s.in.waiting.pop()
		s.in.active = 0
		c.setPhase(s, phaseClosed, ErrClosed)
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
