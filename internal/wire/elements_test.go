package wire

import (
	"strings"
	"testing"
)

func TestElements(t *testing.T) {
	cases := map[string]string{
		`[]`:    ``,
		` [ ] `: ``,
		`[1]`:   `1`,
		`[ {"a":[1,2]} , "x,]" ,null,[[]],-1.5e3 ]`: `{"a":[1,2]}|"x,]"|null|[[]]|-1.5e3`,
		"[\n{}\t,\r\n{}]": `{}|{}`,
	}
	for in, want := range cases {
		var s Scanner
		if top, _, err := s.Scan([]byte(in), nil); err != nil || top != Array {
			t.Fatalf("%s: not a valid array: %v", in, err)
		}
		var got []string
		Elements([]byte(in), func(e []byte) bool { got = append(got, string(e)); return true })
		if strings.Join(got, "|") != want {
			t.Errorf("Elements(%s) = %q, want %q", in, strings.Join(got, "|"), want)
		}
	}
	n := 0
	Elements([]byte(`[1,2,3]`), func([]byte) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("yield returning false: %d calls, want 2", n)
	}
}
