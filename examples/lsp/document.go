package main

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// document is the text of an open document, with where its lines start.
// LSP counts a position's character in UTF-16 code units, and ends lines
// at "\n", "\r\n" or "\r"; the text is UTF-8 (JSON strings decode to
// valid UTF-8), so positions and byte offsets convert by walking a line's
// runes: a rune beyond U+FFFF is two code units.
type document struct {
	version int
	text    string
	lines   []int // byte offset of each line's start; lines[0] == 0
}

func newDocument(text string, version int) *document {
	d := &document{text: text, version: version, lines: []int{0}}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			d.lines = append(d.lines, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			d.lines = append(d.lines, i+1)
		}
	}
	return d
}

// lineEnd returns the byte offset where line's text ends, before its line
// break.
func (d *document) lineEnd(line int) int {
	if line+1 >= len(d.lines) {
		return len(d.text)
	}
	end := d.lines[line+1] - 1
	if end > d.lines[line] && d.text[end] == '\n' && d.text[end-1] == '\r' {
		end--
	}
	return end
}

// offsetAt returns the byte offset of pos. As LSP asks, a character beyond
// the end of its line means the line's end, and a line beyond the last
// one the document's end; a position inside a surrogate pair (between
// the two code units of one rune) means the start of that rune.
func (d *document) offsetAt(pos Position) int {
	switch {
	case pos.Line < 0:
		return 0
	case pos.Line >= len(d.lines):
		return len(d.text)
	}
	off, end, units := d.lines[pos.Line], d.lineEnd(pos.Line), 0
	for off < end && units < pos.Character {
		r, size := utf8.DecodeRuneInString(d.text[off:end])
		w := utf16Len(r)
		if units+w > pos.Character {
			break
		}
		units += w
		off += size
	}
	return off
}

// positionAt returns the position of the byte offset off, which must be
// at a rune's start.
func (d *document) positionAt(off int) Position {
	line := d.lineOf(off)
	return Position{Line: line, Character: utf16Count(d.text[d.lines[line]:off])}
}

// utf16Count returns how many UTF-16 code units s takes.
func utf16Count(s string) int {
	n := 0
	for _, r := range s {
		n += utf16Len(r)
	}
	return n
}

func utf16Len(r rune) int {
	if n := utf16.RuneLen(r); n > 0 {
		return n
	}
	return 1 // U+FFFD, which invalid UTF-8 decodes to
}

// isWordRune: words are made of letters, digits and underscores.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// wordAt returns the word that pos touches (the one it is in, or the one
// it ends or starts) and its range, or ok false when pos touches none.
func (d *document) wordAt(pos Position) (word string, rng Range, ok bool) {
	off := d.offsetAt(pos)
	start, end := off, off
	for start > 0 {
		r, size := utf8.DecodeLastRuneInString(d.text[:start])
		if !isWordRune(r) {
			break
		}
		start -= size
	}
	for end < len(d.text) {
		r, size := utf8.DecodeRuneInString(d.text[end:])
		if !isWordRune(r) {
			break
		}
		end += size
	}
	if start == end {
		return "", Range{}, false
	}
	// Words do not span lines: line breaks are not word runes.
	startPos := d.positionAt(start)
	endPos := Position{Line: startPos.Line, Character: startPos.Character + utf16Count(d.text[start:end])}
	return d.text[start:end], Range{Start: startPos, End: endPos}, true
}

// todos returns the range of every occurrence of TODO, in order. The
// positions are found in one pass over the text, however many there are.
func (d *document) todos() []Range {
	const marker = "TODO"
	var out []Range
	line, lineOff, units := 0, 0, 0 // where the last count ended
	for from := 0; ; {
		i := strings.Index(d.text[from:], marker)
		if i < 0 {
			return out
		}
		at := from + i
		if l := d.lineOf(at); l != line {
			line, lineOff, units = l, d.lines[l], 0
		}
		units += utf16Count(d.text[lineOff:at])
		start := Position{Line: line, Character: units}
		out = append(out, Range{Start: start, End: Position{Line: line, Character: units + len(marker)}})
		lineOff = at
		from = at + len(marker)
	}
}

// lineOf returns the line the byte offset off is on.
func (d *document) lineOf(off int) int {
	return sort.Search(len(d.lines), func(i int) bool { return d.lines[i] > off }) - 1
}

// apply returns the document after changes, at version: a change without
// a range replaces the whole text; one with a range replaces that range
// (positions of the text as the changes before it left it).
func (d *document) apply(changes []ContentChange, version int) *document {
	next := &document{text: d.text, lines: d.lines}
	for _, ch := range changes {
		text := ch.Text
		if ch.Range != nil {
			start, end := next.offsetAt(ch.Range.Start), next.offsetAt(ch.Range.End)
			if end < start {
				start, end = end, start
			}
			text = next.text[:start] + ch.Text + next.text[end:]
		}
		next = newDocument(text, version)
	}
	next.version = version
	return next
}
