package transcript

import (
	"slices"
	"sort"
)

// run is a prompt whose reply gave a message id: what a client's Run then
// awaits (docs/wire.md §6.3) is the receipt of that message on the session,
// then the session's idle.
type run struct {
	line    int    // of the reply
	prompt  int    // of the prompt
	msgID   string // the message id of the reply
	receipt bool   // the receipt was seen
}

// sessionRuns is what a Checker knows of one session's runs.
type sessionRuns struct {
	runs     []*run
	receipts []earlyReceipt // received before the reply named them (the receipt comes first)
	// cut is the line of the last frame of the session that a tap log cut
	// before it showed whether it was a receipt or an idle (0: none).
	cut int
}

// earlyReceipt is the receipt of a message that no reply has named yet.
type earlyReceipt struct {
	id string
	// idled says the session went idle after the receipt: a client's Run,
	// subscribed before it prompted, has seen all it awaits once the reply
	// comes (docs/wire.md §6.3).
	idled bool
}

// maxEarlyReceipts bounds the receipts kept per session for replies not
// yet read.
const maxEarlyReceipts = 64

// prompted records the reply, on line n, to the session/prompt p: a run of
// its session now awaits the receipt of msgID (unless it came already),
// then an idle.
func (c *Checker) prompted(n int, p *pending, msgID string) {
	session := p.session
	sr := c.sessionRuns(session)
	r := &run{line: n, prompt: p.line, msgID: msgID}
	if i := slices.IndexFunc(sr.receipts, func(e earlyReceipt) bool { return e.id == msgID }); i >= 0 {
		idled := sr.receipts[i].idled
		sr.receipts = slices.Delete(sr.receipts, i, i+1)
		if idled {
			return // the run ended before its reply came
		}
		r.receipt = true
	}
	if len(sr.runs) == maxRuns {
		old := sr.runs[0]
		sr.runs = slices.Delete(sr.runs, 0, 1)
		c.add(old.line, RunUnfinished, "session %s: message %q: the session did not go idle after it within the next %d prompts; check stopped waiting", session, old.msgID, maxRuns)
	}
	sr.runs = append(sr.runs, r)
}

// maxRuns bounds the runs check waits for per session.
const maxRuns = 1024

// received records the ids an agent/inbox/spliced event of session
// inserted: the receipts of runs, or of replies still to come.
func (c *Checker) received(session string, ids []string) {
	if len(ids) == 0 {
		return
	}
	sr := c.sessionRuns(session)
	for _, id := range ids {
		i := slices.IndexFunc(sr.runs, func(r *run) bool { return r.msgID == id && !r.receipt })
		if i >= 0 {
			sr.runs[i].receipt = true
			continue
		}
		if len(sr.receipts) == maxEarlyReceipts {
			sr.receipts = slices.Delete(sr.receipts, 0, 1)
		}
		sr.receipts = append(sr.receipts, earlyReceipt{id: id})
	}
}

// idle ends the runs of session whose receipt was seen, and those whose
// receipt came before their reply, as the reply comes.
func (c *Checker) idle(session string) {
	sr, ok := c.runs.get(session)
	if !ok {
		return
	}
	sr.runs = slices.DeleteFunc(sr.runs, func(r *run) bool { return r.receipt })
	for i := range sr.receipts {
		sr.receipts[i].idled = true
	}
}

func (c *Checker) sessionRuns(session string) *sessionRuns {
	sr, ok := c.runs.get(session)
	if !ok {
		sr = &sessionRuns{}
		c.runs.set(session, sr) // a session forgotten takes its runs along
	}
	return sr
}

// finish reports the requests that were never answered, and the runs
// that would still be waiting when the transcript ends.
func (c *Checker) finish() {
	var left []*pending
	c.pending.each(func(_ pendingKey, p *pending) { left = append(left, p) })
	sort.Slice(left, func(i, j int) bool { return left[i].line < left[j].line })
	// A frame cut before its id after a request may have been its
	// response: each such frame excuses one unanswered request before it
	// (both lists are in line order, so one pass pairs them).
	taken := map[Dir]int{}
	for _, p := range left {
		answers := map[Dir]Dir{c2s: s2c, s2c: c2s}[p.dir]
		l, j := c.idless[answers], taken[answers]
		for j < len(l) && l[j] < p.line {
			j++
		}
		if j < len(l) {
			taken[answers] = j + 1
			continue
		}
		taken[answers] = j
		c.add(p.line, UnansweredRequest, "%s%s (id %s) got no response", p.dir.label(), p.name(), p.id)
	}
	type open struct {
		session string
		*run
	}
	var runs []open
	c.runs.each(func(s string, sr *sessionRuns) {
		for _, r := range sr.runs {
			// A frame cut after the prompt may have been what the run awaits.
			if max(sr.cut, c.cutAnon) > r.prompt {
				continue
			}
			if c.shutdown < r.line { // a later shutdown ends the run: nothing waits
				runs = append(runs, open{s, r})
			}
		}
	})
	sort.Slice(runs, func(i, j int) bool { return runs[i].line < runs[j].line })
	for _, r := range runs {
		if !r.receipt {
			c.add(r.line, RunUnfinished, "session %s: the prompt was answered with message id %q, but no receipt of it followed (an agent/inbox/spliced event inserting it): a client's Run waits for that receipt, then for the session's idle (docs/wire.md §6.3)", r.session, r.msgID)
		} else {
			c.add(r.line, RunUnfinished, "session %s: message %q was received, but the session never went idle after it: a client's Run waits for that idle (docs/wire.md §6.3)", r.session, r.msgID)
		}
	}
}
