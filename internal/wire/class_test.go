package wire

import "testing"

// TestClass pins the classification table of docs/wire.md §2.2.
func TestClass(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Class
	}{
		{`{"id":1,"method":"m"}`, Request},
		{`{"id":"a","method":"m","result":1,"error":{}}`, Request},
		{`{"id":0,"result":null}`, Response},
		{`{"id":1.5,"method":3}`, Response},
		{`{"id":"","method":null}`, Response},
		{`{"method":"m"}`, Notification},
		{`{"id":null,"method":"m"}`, Notification},
		{`{"id":true,"method":"m"}`, Notification},
		{`{"id":{},"method":"m"}`, Notification},
		{`{"id":[],"method":"m"}`, Notification},
		{`{"id":null}`, Unclassified},
		{`{"method":1}`, Unclassified},
		{`{}`, Unclassified},
		{`{"ID":1,"Method":"m"}`, Unclassified},
		{`{"id":1,"method":"m","id":null}`, Notification}, // the last duplicate counts
	} {
		var s Scanner
		var env Envelope
		if _, _, err := s.Scan([]byte(tc.line), &env); err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		if got := env.Class(); got != tc.want {
			t.Errorf("%s: class %v, want %v", tc.line, got, tc.want)
		}
	}
	if s := Class(9).String(); s != "Class(?)" {
		t.Errorf("Class(9).String() = %q", s)
	}
}
