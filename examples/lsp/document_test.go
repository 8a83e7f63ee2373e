package main

import (
	"reflect"
	"strings"
	"testing"
)

// Positions count UTF-16 code units and lines end at \n, \r\n or \r.
func TestDocumentPositions(t *testing.T) {
	// Line 0: "a😀b" (the emoji is 4 bytes, 2 code units); line 1 ends
	// with \r\n, line 2 with \r; line 3 is "é𝄞z" (2 and 4 bytes; 1 and 2
	// code units).
	d := newDocument("a😀b\nxy\r\nq\ré𝄞z", 1)
	for _, tc := range []struct {
		pos  Position
		off  int
		back Position // positionAt(off): pos itself unless clamped
	}{
		{Position{0, 0}, 0, Position{0, 0}},
		{Position{0, 1}, 1, Position{0, 1}},
		{Position{0, 2}, 1, Position{0, 1}}, // inside the surrogate pair: the emoji's start
		{Position{0, 3}, 5, Position{0, 3}},
		{Position{0, 4}, 6, Position{0, 4}},   // the line's end
		{Position{0, 99}, 6, Position{0, 4}},  // beyond it: the line's end
		{Position{1, 2}, 9, Position{1, 2}},   // before \r\n
		{Position{1, 3}, 9, Position{1, 2}},   // not between \r and \n
		{Position{2, 1}, 12, Position{2, 1}},  // before \r
		{Position{3, 1}, 15, Position{3, 1}},  // after é
		{Position{3, 3}, 19, Position{3, 3}},  // after 𝄞
		{Position{3, 4}, 20, Position{3, 4}},  // the document's end
		{Position{9, 0}, 20, Position{3, 4}},  // beyond the last line
		{Position{-1, 0}, 0, Position{0, 0}},  // before the first
		{Position{2, -5}, 11, Position{2, 0}}, // a negative character: the line's start
	} {
		if got := d.offsetAt(tc.pos); got != tc.off {
			t.Errorf("offsetAt(%v) = %d, want %d", tc.pos, got, tc.off)
		}
		if got := d.positionAt(tc.off); got != tc.back {
			t.Errorf("positionAt(%d) = %v, want %v", tc.off, got, tc.back)
		}
	}
}

func TestDocumentWordAt(t *testing.T) {
	d := newDocument("  𝄞héllo_2, wörld\r\n\tx", 1)
	for _, tc := range []struct {
		pos  Position
		word string
		rng  Range
	}{
		{Position{0, 0}, "", Range{}},
		{Position{0, 2}, "", Range{}}, // before 𝄞, which is no letter
		{Position{0, 4}, "héllo_2", rng(0, 4, 0, 11)},
		{Position{0, 7}, "héllo_2", rng(0, 4, 0, 11)},
		{Position{0, 11}, "héllo_2", rng(0, 4, 0, 11)}, // at its end
		{Position{0, 12}, "", Range{}},                 // after the comma
		{Position{0, 13}, "wörld", rng(0, 13, 0, 18)},
		{Position{0, 18}, "wörld", rng(0, 13, 0, 18)}, // before \r\n: the word does not run on
		{Position{1, 0}, "", Range{}},
		{Position{1, 1}, "x", rng(1, 1, 1, 2)},
	} {
		word, r, ok := d.wordAt(tc.pos)
		if word != tc.word || ok != (tc.word != "") || (ok && r != tc.rng) {
			t.Errorf("wordAt(%v) = %q %v %v, want %q %v", tc.pos, word, r, ok, tc.word, tc.rng)
		}
	}
}

func TestDocumentTodos(t *testing.T) {
	d := newDocument("TODO😀TODO\nnone\r\n é TODOTODO", 1)
	want := []Range{rng(0, 0, 0, 4), rng(0, 6, 0, 10), rng(2, 3, 2, 7), rng(2, 7, 2, 11)}
	if got := d.todos(); !reflect.DeepEqual(got, want) {
		t.Errorf("todos = %v, want %v", got, want)
	}
	if got := newDocument("nothing to do", 1).todos(); got != nil {
		t.Errorf("todos of a clean text = %v", got)
	}
	// Many on one long line: one pass, positions right at the end too.
	long := newDocument(strings.Repeat("ä TODO ", 100000), 1)
	got := long.todos()
	if len(got) != 100000 || got[99999] != rng(0, 99999*7+2, 0, 99999*7+6) {
		t.Errorf("todos of the long line: %d, last %v", len(got), got[len(got)-1])
	}
}

func TestDocumentApply(t *testing.T) {
	d := newDocument("hello world\nbye", 1)
	next := d.apply([]ContentChange{
		{Range: &Range{Start: Position{0, 6}, End: Position{0, 11}}, Text: "there"},
		{Range: &Range{Start: Position{1, 0}, End: Position{1, 0}}, Text: "good"},
	}, 2)
	if next.text != "hello there\ngoodbye" || next.version != 2 {
		t.Errorf("after ranged changes: %q version %d", next.text, next.version)
	}
	if full := next.apply([]ContentChange{{Text: "new"}}, 3); full.text != "new" || full.version != 3 {
		t.Errorf("after a full change: %q version %d", full.text, full.version)
	}
	if same := d.apply(nil, 4); same.text != d.text || same.version != 4 || d.version != 1 {
		t.Errorf("no changes: %q version %d (the old one now %d)", same.text, same.version, d.version)
	}
}
