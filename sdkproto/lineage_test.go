package sdkproto

import (
	"encoding/json"
	"fmt"
	"testing"
)

func started(parent, child string) Notification {
	return Notification{Method: SubagentStarted.Name(), Params: json.RawMessage(fmt.Sprintf(`{"parentSessionId":%q,"childSessionId":%q}`, parent, child))}
}

// Scoping a notification costs the same however deep its session lies in
// the tree: the old upward walk allocated a visited set as deep as the
// chain for every notification on the read loop.
func TestSessionTreeFilterCostIndependentOfDepth(t *testing.T) {
	const depth = 10_000
	c := newClient(nil)
	c.lineage.add("s1", "root")
	for i := 2; i <= depth; i++ {
		c.lineage.add(fmt.Sprint("s", i), fmt.Sprint("s", i-1))
	}
	tree := &sessionTree{root: "root"}
	tree.members = c.lineage.descendants("root")
	if len(tree.members) != depth+1 {
		t.Fatalf("%d members, want %d", len(tree.members), depth+1)
	}
	event := func(s string) Notification {
		return Notification{Method: SessionStatus.Name(), Params: json.RawMessage(fmt.Sprintf(`{"sessionId":%q,"status":"idle"}`, s))}
	}
	shallow, deep := event("s1"), event(fmt.Sprint("s", depth))
	var ok bool
	aShallow := testing.AllocsPerRun(100, func() { ok = tree.filter(shallow) })
	if !ok {
		t.Fatal("shallow session not in the tree")
	}
	aDeep := testing.AllocsPerRun(100, func() { ok = tree.filter(deep) })
	if !ok {
		t.Fatal("deep session not in the tree")
	}
	t.Logf("allocations per notification: depth 1 %.0f, depth %d %.0f", aShallow, depth, aDeep)
	if aDeep > aShallow {
		t.Errorf("a notification %d deep costs %.0f allocations, one at depth 1 costs %.0f", depth, aDeep, aShallow)
	}
}

// The tree follows edges that arrive after it was made, re-parenting out
// of it, cycles, and the lineage forgetting old children.
func TestSessionTreeMembership(t *testing.T) {
	c := newClient(&ClientOptions{MaxLineage: 4})
	c.lineage.add("a", "root")
	c.lineage.add("x", "y")
	c.lineage.add("y", "x") // a cycle outside the tree
	tree := &sessionTree{root: "root", members: c.lineage.descendants("root")}
	c.subs = []*Subscription{{tree: tree}}
	if !tree.has("a") || tree.has("x") || tree.has("y") {
		t.Fatalf("members %v", tree.members)
	}
	for _, e := range [][2]string{{"a", "b"}, {"b", "c"}} {
		c.lineage.add(e[1], e[0])
		if !tree.filter(started(e[0], e[1])) {
			t.Errorf("edge %v not in the tree", e)
		}
	}
	if !tree.has("b") || !tree.has("c") {
		t.Fatalf("members %v", tree.members)
	}
	// Four children remembered: a, the oldest, was forgotten.
	if _, ok := c.lineage.parent["a"]; ok || tree.has("a") || len(c.lineage.parent) != 4 {
		t.Errorf("lineage %v, members %v", c.lineage.parent, tree.members)
	}
	c.lineage.add("c", "elsewhere")
	if tree.filter(started("elsewhere", "c")) || tree.has("c") {
		t.Errorf("re-parented child still in the tree: %v", tree.members)
	}
}
