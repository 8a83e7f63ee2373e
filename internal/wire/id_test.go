package wire

import "testing"

func TestKeyOfID(t *testing.T) {
	num := func(s string) Value { return Value{Raw: []byte(s), Kind: Number} }
	str := func(s string) Value { return Value{Raw: []byte(s), Kind: String} }
	same := []struct{ a, b Value }{
		{num("5"), num("5.0")},
		{num("5"), num("5e0")},
		{num("-0"), num("0")},
		{str(`"a"`), str(`"\u0061"`)},
		{num("1.5"), num("1.5")},
		{num("1.5"), num("15e-1")},
		{num("1.50"), num("0.15E+1")},
		{num("1e400"), num("10e399")},
		{num("-2.5e-400"), num("-25e-401")},
	}
	for _, c := range same {
		if KeyOfID(c.a) != KeyOfID(c.b) {
			t.Errorf("%s and %s do not match", c.a.Raw, c.b.Raw)
		}
	}
	differ := []struct{ a, b Value }{
		{num("5"), str(`"5"`)},
		{num("9007199254740992"), num("9007199254740993")},
		{num("1e400"), num("2e400")},
		{num("1.5"), num("-1.5")},
		{num("1.5"), str(`"1.5"`)},
		{num("1e400"), num("1e401")},
		{str(`"a"`), str(`"b"`)},
	}
	for _, c := range differ {
		if KeyOfID(c.a) == KeyOfID(c.b) {
			t.Errorf("%s and %s match", c.a.Raw, c.b.Raw)
		}
	}
}

func TestIntegerID(t *testing.T) {
	if n, ok := IntegerID(Value{Raw: []byte("7e0"), Kind: Number}); !ok || n != 7 {
		t.Errorf("7e0: %d %v", n, ok)
	}
	if _, ok := IntegerID(Value{Raw: []byte(`"7"`), Kind: String}); ok {
		t.Error(`"7" read as an integer id`)
	}
	if _, ok := IntegerID(Value{Raw: []byte("9223372036854775808"), Kind: Number}); ok {
		t.Error("2^63 read as an int64 id")
	}
	if a := testing.AllocsPerRun(100, func() { IntegerID(Value{Raw: []byte("12345"), Kind: Number}) }); a != 0 {
		t.Errorf("IntegerID allocates %v times", a)
	}
}
