package rpc

import (
	"sync/atomic"
	"time"
)

// leadPatience is how long the goroutine leading the read loop may be held
// up by a handler or a flush before the lead passes to another goroutine.
// Most handlers finish well within it, and are then served without any
// goroutine switch; past it, one switch is a small price.
const leadPatience = 100 * time.Microsecond

// leadWatch passes the lead of the read loop on when its holder is held
// up. The holder arms it before serving a request (or flushing) and
// disarms it after; if the timer fires first, it takes the lead from the
// holder and gives it to another goroutine. Exactly one of the two wins
// each arming, by the compare-and-swap on armed; a late firing that finds
// a later arming passes the lead early, which is harmless.
type leadWatch struct {
	armed  atomic.Bool
	timer  *time.Timer
	reader *reader // the state of the read loop, handed on with the lead
}

func (c *Conn) initWatch(rd *reader) {
	c.lw.reader = rd
	c.lw.timer = time.AfterFunc(time.Hour, c.takeLead)
	c.lw.timer.Stop()
}

// watch arms the watch.
func (c *Conn) watch() {
	c.lw.armed.Store(true)
	c.lw.timer.Reset(leadPatience)
}

// unwatch disarms the watch and reports whether the caller still leads.
func (c *Conn) unwatch() bool {
	kept := c.lw.armed.CompareAndSwap(true, false)
	c.lw.timer.Stop()
	return kept
}

// takeLead runs when the watch fires.
func (c *Conn) takeLead() {
	if c.lw.armed.CompareAndSwap(true, false) {
		c.passLead(c.lw.reader)
	}
}
