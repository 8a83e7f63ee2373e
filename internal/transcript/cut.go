package transcript

import (
	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/sdkproto"
)

// A frame that a tap log holds cut short ("truncated":true) cannot be
// checked, but its first bytes often still hold what other frames are
// checked against: its id, its method, the session and seq of an event.
// cutFacts are those members, read from the prefix without validating it.

// cutFacts are the members of a frame's first bytes that lie whole within
// them; a member cut off, or not reached, is absent (its has… false).
type cutFacts struct {
	id        wire.Value // Kind Absent when cut off
	method    string
	hasMethod bool
	response  bool // a result or error member begins in the prefix
	result    bool // it is a result member

	messageID    string // result.messageId, of a session/prompt reply
	hasMessageID bool

	session    string // params.sessionId
	hasSession bool
	status     string // params.status, of a session.status
	hasStatus  bool

	eventType     string // params.event.type
	hasEventType  bool
	seq           int64 // params.event.seq
	hasSeq        bool
	inserted      []string // params.event.data.inserted[].id, of a splice
	insertedWhole bool     // the inserted array ends within the prefix
}

// walkedPaths are the containers readCut descends into, by path; other
// values are skipped.
var walkedPaths = map[string]bool{
	"": true, "result": true, "params": true, "params/event": true,
	"params/event/data": true, "params/event/data/inserted": true, "params/event/data/inserted/[]": true,
}

// readCut reads the members of a cut frame's first bytes.
func readCut(prefix []byte) cutFacts {
	w := prefixWalker{b: prefix}
	w.value(w.ws(0), "")
	return w.f
}

// prefixWalker walks JSON that may end anywhere, keeping what cutFacts
// holds. It never fails: at bytes that are not JSON it stops, as at the end.
type prefixWalker struct {
	b []byte
	f cutFacts
}

// ws returns the offset of the first byte at or after i that is not JSON
// white space.
func (w *prefixWalker) ws(i int) int {
	for i < len(w.b) && (w.b[i] == ' ' || w.b[i] == '\t' || w.b[i] == '\n' || w.b[i] == '\r') {
		i++
	}
	return i
}

// value walks the value at b[i], found at path, and returns the offset
// past it and whether it ends within the prefix.
func (w *prefixWalker) value(i int, path string) (int, bool) {
	if i >= len(w.b) {
		return i, false
	}
	switch c := w.b[i]; {
	case (c == '{' || c == '[') && !walkedPaths[path]:
		return w.skipContainer(i)
	case c == '{':
		return w.object(i, path)
	case c == '[':
		return w.array(i, path)
	case c == '"':
		end, ok := w.skipString(i)
		if ok {
			w.leaf(path, w.b[i:end])
		}
		return end, ok
	default:
		start := i
		for i < len(w.b) && !delimiter(w.b[i]) {
			i++
		}
		// A scalar that reaches the end of the prefix may go on beyond it.
		if i == start || i >= len(w.b) {
			return i, false
		}
		w.leaf(path, w.b[start:i])
		return i, true
	}
}

func (w *prefixWalker) object(i int, path string) (int, bool) {
	i = w.ws(i + 1)
	if i < len(w.b) && w.b[i] == '}' {
		return i + 1, true
	}
	for i < len(w.b) && w.b[i] == '"' {
		end, ok := w.skipString(i)
		if !ok {
			return end, false
		}
		key := string(wire.AppendUnquote(nil, w.b[i:end]))
		if path == "" && (key == "result" || key == "error") {
			w.f.response, w.f.result = true, key == "result"
		}
		i = w.ws(end)
		if i >= len(w.b) || w.b[i] != ':' {
			return i, false
		}
		sub := key
		if path != "" {
			sub = path + "/" + key
		}
		if i, ok = w.value(w.ws(i+1), sub); !ok {
			return i, false
		}
		i = w.ws(i)
		if i < len(w.b) && w.b[i] == '}' {
			return i + 1, true
		}
		if i >= len(w.b) || w.b[i] != ',' {
			return i, false
		}
		i = w.ws(i + 1)
	}
	return i, false
}

func (w *prefixWalker) array(i int, path string) (int, bool) {
	i = w.ws(i + 1)
	if i < len(w.b) && w.b[i] == ']' {
		w.arrayEnded(path)
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = w.value(i, path+"/[]"); !ok {
			return i, false
		}
		i = w.ws(i)
		if i < len(w.b) && w.b[i] == ']' {
			w.arrayEnded(path)
			return i + 1, true
		}
		if i >= len(w.b) || w.b[i] != ',' {
			return i, false
		}
		i = w.ws(i + 1)
	}
}

func (w *prefixWalker) arrayEnded(path string) {
	if path == "params/event/data/inserted" {
		w.f.insertedWhole = true
	}
}

// leaf keeps a whole scalar found at path, when cutFacts holds it.
func (w *prefixWalker) leaf(path string, raw []byte) {
	str := func() (string, bool) {
		if wire.KindOf(raw) != wire.String {
			return "", false
		}
		return string(wire.AppendUnquote(nil, raw)), true
	}
	f := &w.f
	switch path {
	case "id":
		f.id = wire.Value{Raw: raw, Kind: wire.KindOf(raw)}
	case "method":
		f.method, f.hasMethod = str()
	case "result/messageId":
		f.messageID, f.hasMessageID = str()
	case "params/sessionId":
		f.session, f.hasSession = str()
	case "params/status":
		f.status, f.hasStatus = str()
	case "params/event/type":
		f.eventType, f.hasEventType = str()
	case "params/event/seq":
		f.seq, f.hasSeq = wire.NumberInt64(raw)
	case "params/event/data/inserted/[]/id":
		if id, ok := str(); ok {
			f.inserted = append(f.inserted, id)
		}
	}
}

// skipString returns the offset past the string that starts at b[i], and
// whether it ends within the prefix.
func (w *prefixWalker) skipString(i int) (int, bool) {
	for i++; i < len(w.b); i++ {
		switch w.b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return len(w.b), false
}

// skipContainer returns the offset past the object or array that starts
// at b[i], and whether it ends within the prefix.
func (w *prefixWalker) skipContainer(i int) (int, bool) {
	depth := 0
	for i < len(w.b) {
		switch w.b[i] {
		case '"':
			var ok bool
			if i, ok = w.skipString(i); !ok {
				return i, false
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1, true
			}
		}
		i++
	}
	return i, false
}

// delimiter reports whether c ends a scalar.
func delimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ':', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// cutFrame takes a frame of size bytes that a tap log holds cut to prefix,
// read on line n in direction dir. It is not checked, but what its first
// bytes show counts as in a whole frame: its id answers or awaits a
// response, its session and seq are an event's, a prompt's reply starts a
// run. What they do not show leaves later frames unjudged where it could
// matter: a gap in a session's seqs, a run that seems unfinished.
func (c *Checker) cutFrame(n int, dir Dir, prefix []byte, size int64) {
	c.counts.Frames++
	c.add(n, NotChecked, "%sa frame of %d bytes was logged cut to its first %d: not checked, but its id, method, session and seq count where those hold them", dir.label(), size, len(prefix))
	f := readCut(prefix)
	hasID := f.id.Kind == wire.String || f.id.Kind == wire.Number
	var id wire.IDKey
	if hasID {
		id = wire.KeyOfID(f.id)
	}
	switch {
	case hasID && (f.response || !f.hasMethod && c.awaitsResponse(dir, id)):
		c.counts.Responses++
		if p := c.settle(n, dir, id, string(f.id.Raw)); p != nil && (f.result || !f.response) {
			c.cutResult(n, p, &f)
		}
	case hasID:
		c.counts.Requests++
		if dir == Unknown && clientRequests[f.method] {
			dir = c2s
		}
		req := &pending{line: n, dir: dir, method: f.method, id: string(f.id.Raw), methodCut: !f.hasMethod}
		if f.method == "session/prompt" && f.hasSession {
			req.session = f.session
		}
		c.track(id, req)
	case f.hasMethod:
		c.counts.Notifications++
		if dir != c2s {
			c.cutNotification(n, &f)
		}
	default:
		c.addIdless(dir, n)
		if dir != c2s {
			c.cutAnon = n // it may have been a notification of any session
		}
	}
}

// addIdless records a frame cut before its id, read on line n. Each list
// keeps the latest checkTable lines, in order.
func (c *Checker) addIdless(dir Dir, n int) {
	if c.idless == nil {
		c.idless = map[Dir][]int{}
	}
	l := append(c.idless[dir], n)
	c.idless[dir] = l[max(0, len(l)-checkTable):]
}

// takeIdless takes the earliest frame sent in dir that was cut before its
// id, and reports whether there was one: a response that answers no
// request check knows of may answer it.
func (c *Checker) takeIdless(dir Dir) bool {
	l := c.idless[dir]
	if len(l) == 0 {
		return false
	}
	c.idless[dir] = l[1:]
	return true
}

// awaitsResponse reports whether a request waits for a response sent in
// direction dir with this id: a frame cut after its id, before a member
// that tells a response from a request, is taken for that response.
func (c *Checker) awaitsResponse(dir Dir, id wire.IDKey) bool {
	p, _ := c.awaiting(dir, id)
	return p != nil
}

// cutResult takes what the first bytes of a cut response that may be a
// result show: a result to initialize is its success, and a reply to
// session/prompt whose message id they hold starts a run.
func (c *Checker) cutResult(n int, p *pending, f *cutFacts) {
	switch p.method {
	case "initialize":
		if f.result {
			c.initOK = true
		} else {
			c.initMaybe = true
		}
	case "session/prompt":
		if f.hasMessageID && p.session != "" {
			c.prompted(n, p, f.messageID)
		}
	}
}

// cutNotification takes what the first bytes of a runtime notification
// show: an event's seq and receipts, a status's idle.
func (c *Checker) cutNotification(n int, f *cutFacts) {
	switch f.method {
	case "session.event":
		if !f.hasSession {
			c.cutAnon = n
			return
		}
		eventType := "an event cut short"
		if f.hasEventType {
			eventType = f.eventType
		}
		if f.hasSeq {
			c.eventSeq(n, f.session, eventType, f.seq)
		} else {
			c.eventCut(f.session, n)
		}
		if f.hasEventType && f.eventType != string(sdkproto.EventAgentInboxSpliced) {
			return
		}
		c.received(f.session, f.inserted)
		if !f.hasEventType || !f.insertedWhole {
			c.sessionRuns(f.session).cut = n // a receipt whose ids were cut off
		}
	case "session.status":
		switch {
		case !f.hasSession:
			c.cutAnon = n
		case !f.hasStatus:
			c.sessionRuns(f.session).cut = n // it may have been the idle
		case f.status == string(sdkproto.StatusIdle):
			c.idle(f.session)
		}
	}
}
