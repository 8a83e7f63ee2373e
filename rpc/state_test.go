package rpc

import (
	"errors"
	"strings"
	"testing"
)

// An impossible change of a Conn's state panics where it happens (the
// check runs under test), naming what broke.
func TestImpossibleTransitionsPanic(t *testing.T) {
	if !checkInvariants {
		t.Fatal("invariants are not checked under test")
	}
	ended := errors.New("ended")
	for name, bad := range map[string]func(s *connState){
		"end undone":           func(s *connState) { s.err = nil },
		"closed without end":   func(s *connState) { s.err, s.closed = nil, true },
		"slots over the bound": func(s *connState) { s.active = s.maxActive + 1 },
		"waits with a free slot": func(s *connState) {
			s.waiting.push(waitingTask{rc: &requestContext{t: &unknownTask{}}})
		},
		"stuck beyond active":  func(s *connState) { s.stuck = s.active + 1 },
		"reading before Start": func(s *connState) { s.started, s.reading = false, true },
	} {
		c := NewConn(strings.NewReader(""), discard{}, nil)
		if name == "end undone" {
			c.update(func(s *connState) { s.endWith(ended) })
		}
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
	c.update(func(s *connState) { s.started, s.reading = true, true })
	c.update(func(s *connState) {
		s.active = s.maxActive
		s.waiting.push(waitingTask{rc: &requestContext{t: &unknownTask{}}})
	})
	c.update(func(s *connState) { s.closed = true; s.endWith(ErrClosed); s.waiting.takeAll(); s.reading = false })
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
