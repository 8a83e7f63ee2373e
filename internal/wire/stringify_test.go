package wire

import "testing"

func TestStringify(t *testing.T) {
	got, err := Stringify(map[string]any{"a": "<b>&</b>", "n": []int{1, 2}})
	if err != nil || string(got) != `{"a":"<b>&</b>","n":[1,2]}` {
		t.Fatalf("Stringify = %s, %v", got, err)
	}
	if _, err := Stringify(func() {}); err == nil {
		t.Fatal("a func encoded without an error")
	}
}
