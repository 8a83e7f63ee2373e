package sdkproto

// DefaultMaxLineage is the default of ClientOptions.MaxLineage.
const DefaultMaxLineage = 1 << 16

// lineage is the session lineage that subagent.started reports: child
// session -> parent session, for at most max children, the oldest edge
// forgotten first. It is guarded by the Client's mu.
type lineage struct {
	max     int
	parent  map[string]string
	order   []string // children in the order they were first seen
	head    int      // order[head:] are the children still remembered
	evicted func(child string)
}

func newLineage(max int) *lineage {
	return &lineage{max: max, parent: map[string]string{}}
}

// add records child -> parent (the last edge wins) and forgets the oldest
// child when there are too many, telling evicted.
func (l *lineage) add(child, parent string) {
	if _, ok := l.parent[child]; ok {
		l.parent[child] = parent
		return
	}
	l.parent[child] = parent
	l.order = append(l.order, child)
	if len(l.order)-l.head <= l.max {
		return
	}
	old := l.order[l.head]
	l.order[l.head] = ""
	l.head++
	delete(l.parent, old)
	if l.head > len(l.order)/2 { // let the forgotten prefix go
		l.order = append([]string(nil), l.order[l.head:]...)
		l.head = 0
	}
	if l.evicted != nil {
		l.evicted(old)
	}
}

// descendants returns root and every session that descends from it
// through the remembered edges. Each session is walked up at most once
// (a memo of the outcome of every session seen), so the cost is linear in
// the lineage; cycles end the walk.
func (l *lineage) descendants(root string) map[string]struct{} {
	in := map[string]bool{root: true} // outcome per session walked
	var path []string
	for child := range l.parent {
		path = path[:0]
		s, member := child, false
		for {
			if known, ok := in[s]; ok {
				member = known
				break
			}
			in[s] = false // provisional: a cycle through s ends outside the tree
			path = append(path, s)
			p, ok := l.parent[s]
			if !ok {
				break
			}
			s = p
		}
		for _, q := range path {
			in[q] = member
		}
	}
	set := map[string]struct{}{}
	for s, ok := range in {
		if ok {
			set[s] = struct{}{}
		}
	}
	return set
}

// sessionTree is the membership of one session-tree subscription: root
// and its known descendants. intake keeps it current as edges
// arrive, so that deciding whether a notification belongs to the tree
// costs one map lookup, however deep the tree.
type sessionTree struct {
	root    string
	members map[string]struct{}
}

func (t *sessionTree) has(s string) bool {
	_, ok := t.members[s]
	return ok
}

// filter is the session-tree scoping of docs/wire.md §6.2. It runs in
// intake only, after the Client recorded the notification's edge.
func (t *sessionTree) filter(n Notification) bool {
	switch n.Method {
	case SubagentStarted.Name():
		parent, okP := n.str("parentSessionId")
		child, okC := n.str("childSessionId")
		accept := (okP && t.has(parent)) || (okC && child == t.root)
		if okP && okC && parent != "" && child != "" && parent != child && child != t.root {
			if t.has(parent) {
				t.members[child] = struct{}{}
			} else {
				// Re-parented out of the tree. (Its own descendants stay
				// members until they are re-parented or forgotten.)
				delete(t.members, child)
			}
		}
		return accept
	case SubagentFinished.Name():
		if parent, ok := n.str("parentSessionId"); ok && t.has(parent) {
			return true
		}
		child, ok := n.str("childSessionId")
		return ok && child == t.root
	}
	s, ok := n.SessionID()
	return ok && t.has(s)
}
