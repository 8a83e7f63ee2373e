package rpc

import (
	"sync/atomic"
	"time"
)

// leadPatience is how long the goroutine leading the read loop may be held
// up by a handler or a flush, and how long the lead may lie free (see
// releaseLead), before the lead passes to another goroutine: between one
// and two periods of it. Most handlers finish well within it, and are then
// served without any goroutine switch; past it, one switch is a small
// price.
const leadPatience = 50 * time.Microsecond

// leadWatch passes the lead of the read loop on when its holder is held up,
// or when it lies free for too long.
//
// A holder arms it before serving a request (or flushing), with a token of
// its own, and disarms it after. Exactly one of the holder and the watch
// wins each arming, by compare-and-swap on armed. A holder that lost the
// lead finds a later token there and leaves the watch alone.
//
// Arming costs two atomic operations, not a timer: a timer set per request
// would wake the runtime's network poller each time. Instead the watch
// ticks every leadPatience while the Conn is busy, and passes the lead when
// it finds the same token armed (or the same free lead) at two ticks in a
// row. It stops ticking after a tick that finds nothing armed and no arming
// since the previous one.
type leadWatch struct {
	armed  atomic.Uint64 // the token of the armed holder; 0 when disarmed
	tokens atomic.Uint64 // the last token issued

	// free holds the lead while no goroutine does (see releaseLead), and
	// freeGen counts its releases, so that a tick can tell a lead free
	// since the previous tick from one released again.
	free    atomic.Pointer[reader]
	freeGen atomic.Uint64

	ticking atomic.Bool // a tick is scheduled
	timer   *time.Timer
	reader  *reader // the state of the read loop, handed on with the lead

	// What the previous tick saw. Only ticks touch them, one at a time.
	seenArmed, seenTokens, seenFree uint64
}

func (c *Conn) initWatch(rd *reader) {
	c.lw.reader = rd
	c.lw.timer = time.AfterFunc(time.Hour, c.tick)
	c.lw.timer.Stop()
}

// watch arms the watch and returns the token that disarms it.
func (c *Conn) watch() uint64 {
	token := c.lw.tokens.Add(1)
	c.lw.armed.Store(token)
	c.startTicking()
	return token
}

// unwatch disarms the watch armed with token and reports whether the
// caller still leads.
func (c *Conn) unwatch(token uint64) bool {
	return c.lw.armed.CompareAndSwap(token, 0)
}

func (c *Conn) startTicking() {
	if !c.lw.ticking.Load() && c.lw.ticking.CompareAndSwap(false, true) {
		c.lw.timer.Reset(leadPatience)
	}
}

// tick runs every leadPatience while the Conn is busy.
func (c *Conn) tick() {
	if c.closed() {
		return // ticking stays set: nothing restarts it
	}
	armed := c.lw.armed.Load()
	if armed != 0 && armed == c.lw.seenArmed && c.lw.armed.CompareAndSwap(armed, 0) {
		c.passLead(c.lw.reader) // held up since the previous tick
		armed = 0
	}
	free := c.lw.freeGen.Load()
	if c.lw.free.Load() != nil && free == c.lw.seenFree {
		if rd := c.lw.free.Swap(nil); rd != nil {
			c.passLead(rd) // free since the previous tick
			c.running.Done()
		}
	}
	tokens := c.lw.tokens.Load()
	quiet := armed == 0 && tokens == c.lw.seenTokens && c.lw.free.Load() == nil
	c.lw.seenArmed, c.lw.seenTokens, c.lw.seenFree = armed, tokens, free
	if !quiet {
		c.lw.timer.Reset(leadPatience)
		return
	}
	c.lw.ticking.Store(false)
	// An arming or a release that saw ticking still set before the store
	// above did not start it: look again.
	if c.lw.armed.Load() != 0 || c.lw.free.Load() != nil {
		c.startTicking()
	}
}

// releaseLead leaves the lead free, for a caller to take when it waits for
// its response (see takeFreeLead): the read loop stays idle for a moment,
// and if no caller comes, the watch passes the lead to a goroutine of the
// Conn. The count the lead holds in running goes with it.
func (c *Conn) releaseLead(rd *reader) {
	c.workers.waitInput(true) // nothing received is left unhandled
	c.lw.freeGen.Add(1)
	c.lw.free.Store(rd)
	if c.closed() {
		// Close may have looked for a free lead before this one was: the
		// read loop ends here.
		c.endFreeLead()
		return
	}
	c.startTicking()
}

// endFreeLead ends reading for Close, if the lead lies free.
func (c *Conn) endFreeLead() {
	if c.takeFreeLead() != nil {
		c.endReading(nil)
		c.running.Done()
	}
}

// takeFreeLead takes the lead if it lies free.
func (c *Conn) takeFreeLead() *reader {
	if c.lw.free.Load() == nil {
		return nil
	}
	return c.lw.free.Swap(nil)
}
