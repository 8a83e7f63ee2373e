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
// up. The holder arms it before serving a request (or flushing), with a
// token of its own, and disarms it after; if the timer fires first, it
// takes the lead from the holder and gives it to another goroutine.
// Exactly one of the two wins each arming, by compare-and-swap on armed. A
// holder that lost the lead finds a later holder's token there and leaves
// the watch alone; a late firing that finds a later arming passes the lead
// early, which is harmless.
type leadWatch struct {
	armed  atomic.Uint64 // the token of the armed holder; 0 when disarmed
	tokens atomic.Uint64
	timer  *time.Timer
	reader *reader // the state of the read loop, handed on with the lead
}

func (c *Conn) initWatch(rd *reader) {
	c.lw.reader = rd
	c.lw.timer = time.AfterFunc(time.Hour, c.takeLead)
	c.lw.timer.Stop()
}

// watch arms the watch and returns the token that disarms it.
func (c *Conn) watch() uint64 {
	token := c.lw.tokens.Add(1)
	c.lw.armed.Store(token)
	c.lw.timer.Reset(leadPatience)
	return token
}

// unwatch disarms the watch armed with token and reports whether the
// caller still leads.
func (c *Conn) unwatch(token uint64) bool {
	if !c.lw.armed.CompareAndSwap(token, 0) {
		return false
	}
	c.lw.timer.Stop()
	return true
}

// takeLead runs when the watch fires.
func (c *Conn) takeLead() {
	if token := c.lw.armed.Load(); token != 0 && c.lw.armed.CompareAndSwap(token, 0) {
		c.passLead(c.lw.reader)
	}
}
