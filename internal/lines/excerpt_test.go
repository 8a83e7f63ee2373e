package lines

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExcerpt(t *testing.T) {
	if got := Excerpt([]byte("short")); got != "short" {
		t.Errorf("short: %q", got)
	}
	long := Excerpt([]byte(strings.Repeat("é", 10_000)))
	if n := utf8.RuneCountInString(long); n != ExcerptRunes || !strings.HasSuffix(long, "…") {
		t.Errorf("long: %d runes, %q", n, long[len(long)-8:])
	}
	if got := Excerpt([]byte("a\xffb")); got != "a\uFFFDb" {
		t.Errorf("invalid UTF-8: %q", got)
	}
}
