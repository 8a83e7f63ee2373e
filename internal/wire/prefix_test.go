package wire

import "testing"

func TestResponseIDInPrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix, id string // id "": none
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"data":"xxxx`, `7`},
		{`{"jsonrpc":"2.0","id":"a\"b","error":{"code":1,"mess`, `"a\"b"`},
		{` { "id" : 12 , "result" : "xxxx`, `12`},
		{`{"result":"xxx","id":3}`, `3`}, // whole: the id after the result
		{`{"result":"xxxxx`, ``},         // the id is past the cut
		{`{"id":7,"method":"m","params":{"x`, ``},
		{`{"id":7,"params":{"x`, ``}, // no result or error: not a response
		{`{"id":12`, ``},             // the number may go on
		{`{"id":7,"result":1,"method":"x`, ``},
		{`{"id":null,"result":"xxx`, ``},
		{`{"id":{"a":1},"result":"xxx`, ``},
		{`{"id":01,"result":"xxx`, ``}, // not valid JSON
		{`["id",7,"result"`, ``},
		{``, ``},
		{`{"i\u0064":9,"result":"xx`, `9`},
	} {
		id, ok := ResponseIDInPrefix([]byte(tc.prefix))
		if ok != (tc.id != "") || string(id.Raw) != tc.id {
			t.Errorf("%s: %q %v, want %q", tc.prefix, id.Raw, ok, tc.id)
		}
	}
}

func TestMethodInPrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		want   bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2,3`, true},
		{`{"method":"note","params":"xxxx`, true},
		{` { "m\u0065thod" : "x" , "params"`, true},
		{`{"params":[1,2,3],"method":"sum"}`, true},
		{`{"params":[1,2,3`, false}, // the method, if any, is past the cut
		{`{"method":"su`, false},    // cut inside the method
		{`{"method":1,"params":"xx`, false},
		{`{"jsonrpc":"2.0","id":1,"result":"xxx`, false},
		{`{"id":null,"error":{"code":-32600`, false},
		{`["method","x"`, false},
		{``, false},
	} {
		if got := MethodInPrefix([]byte(tc.prefix)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.prefix, got, tc.want)
		}
	}
}
