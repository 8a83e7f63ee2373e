package wire

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestStringContent(t *testing.T) {
	tests := []struct {
		raw, content string
		ok           bool
	}{
		{`""`, ``, true},
		{`"abc"`, `abc`, true},
		{`"héllo 😀"`, `héllo 😀`, true},
		{`"a\nb"`, ``, false},
		{`"\u0041"`, ``, false},
		{`abc`, ``, false},
		{`"`, ``, false},
		{`123`, ``, false},
	}
	for _, tc := range tests {
		c, ok := StringContent([]byte(tc.raw))
		if ok != tc.ok || string(c) != tc.content {
			t.Errorf("StringContent(%q) = %q,%v want %q,%v", tc.raw, c, ok, tc.content, tc.ok)
		}
	}
	raw := []byte(`"abc"`)
	if a := testing.AllocsPerRun(100, func() { StringContent(raw) }); a != 0 {
		t.Errorf("allocs = %v", a)
	}
}

func TestAppendUnquote(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`""`, ""},
		{`"plain"`, "plain"},
		{`"\" \\ \/ \b \f \n \r \t"`, "\" \\ / \b \f \n \r \t"},
		{`"\u0041\u00e9\u20ac"`, "Aé€"},
		{`"\u00E9"`, "é"},
		{`"\ud83d\ude00"`, "😀"},
		{`"x\uD83D\uDE00y"`, "x😀y"},
		{`"\ud800"`, "\uFFFD"},              // lone high surrogate
		{`"\udc00"`, "\uFFFD"},              // lone low surrogate
		{`"\ud800x"`, "\uFFFDx"},            // high not followed by escape
		{`"\ud800\u0041"`, "\uFFFDA"},       // high followed by non-surrogate
		{`"\ud800\ud800\udc00"`, "\uFFFD𐀀"}, // second high pairs
		{`"\udc00\ud800"`, "\uFFFD\uFFFD"},  // reversed pair
		{`"\u0000"`, "\x00"},
		{`"héllo"`, "héllo"},
	}
	for _, tc := range tests {
		got := AppendUnquote([]byte("pre:"), []byte(tc.raw))
		if string(got) != "pre:"+tc.want {
			t.Errorf("AppendUnquote(%q) = %q, want %q", tc.raw, got[4:], tc.want)
		}
		// encoding/json uses the same U+FFFD replacement for lone surrogates.
		var s string
		if err := json.Unmarshal([]byte(tc.raw), &s); err != nil || s != tc.want {
			t.Errorf("encoding/json decodes %q as %q (%v), table says %q", tc.raw, s, err, tc.want)
		}
	}
	// Malformed input must not panic.
	for _, raw := range []string{``, `"`, `"\`, `"\u12"`, `"\q"`, `"\ud800\u"`, `abc`} {
		AppendUnquote(nil, []byte(raw))
	}
	buf := make([]byte, 0, 64)
	raw := []byte(`"a\nb\u00e9\ud83d\ude00"`)
	if a := testing.AllocsPerRun(100, func() { AppendUnquote(buf[:0], raw) }); a != 0 {
		t.Errorf("allocs = %v", a)
	}
}

func TestAppendUnquoteDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		raw := genString(r, nil)
		var want string
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("generator produced invalid %q: %v", raw, err)
		}
		if got := AppendUnquote(nil, raw); string(got) != want {
			t.Fatalf("AppendUnquote(%q) = %q, encoding/json %q", raw, got, want)
		}
	}
}

func TestNumberInt64(t *testing.T) {
	tests := []struct {
		raw  string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"-0", 0, true},
		{"5", 5, true},
		{"-5", -5, true},
		{"123456789012345678", 123456789012345678, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"18446744073709551616", 0, false},
		{"99999999999999999999", 0, false},
		{"5.0", 5, true},
		{"5.000000000000000000000000000000", 5, true},
		{"-5.0", -5, true},
		{"1e2", 100, true},
		{"1E2", 100, true},
		{"1e+2", 100, true},
		{"50e-1", 5, true},
		{"5e0", 5, true},
		{"0.5e1", 5, true},
		{"0.05e2", 5, true},
		{"1.5", 0, false},
		{"0.1", 0, false},
		{"1e-1", 0, false},
		{"1e400", 0, false},
		{"1e18", 1e18, true},
		{"1e19", 0, false},
		{"-1e18", -1e18, true},
		{"9.223372036854775807e18", math.MaxInt64, true},
		{"-9.223372036854775808e18", math.MinInt64, true},
		{"9.223372036854775808e18", 0, false},
		{"100000000000000000000e-19", 10, true},
		{"100000000000000000001e-19", 0, false},
		{"0.0e0", 0, true},
		{"0e999999999999999999999", 0, true},
		{"-0.000e-5", 0, true},
		{"1e-999999999999999999999", 0, false},
		{"1e999999999999999999999", 0, false},
		{"12.340e1", 0, false},
		{"12.340e2", 1234, true},
		{"9007199254740993", 9007199254740993, true}, // exact, not rounded to a double
		// Not JSON numbers.
		{"", 0, false},
		{"-", 0, false},
		{"01", 0, false},
		{"00", 0, false},
		{"1.", 0, false},
		{".5", 0, false},
		{"+1", 0, false},
		{"1e", 0, false},
		{"1x", 0, false},
		{"0x1", 0, false},
		{`"5"`, 0, false},
		{"null", 0, false},
	}
	for _, tc := range tests {
		got, ok := NumberInt64([]byte(tc.raw))
		if got != tc.want || ok != tc.ok {
			t.Errorf("NumberInt64(%q) = %d,%v want %d,%v", tc.raw, got, ok, tc.want, tc.ok)
		}
	}
	for _, raw := range [][]byte{[]byte("12345"), []byte("5.0e0"), []byte("-9223372036854775808")} {
		if a := testing.AllocsPerRun(100, func() { NumberInt64(raw) }); a != 0 {
			t.Errorf("NumberInt64(%q) allocs = %v", raw, a)
		}
	}
}

// TestNumberInt64Differential checks the exact decimal reading against
// math/big on random number tokens.
func TestNumberInt64Differential(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	minI, maxI := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	for range 20000 {
		raw := randomNumber(r)
		var s Scanner
		if _, _, err := s.Scan(raw, nil); err != nil {
			t.Fatalf("generator produced invalid number %q", raw)
		}
		rat, ok := new(big.Rat).SetString(string(raw))
		if !ok {
			t.Fatalf("big.Rat cannot parse %q", raw)
		}
		wantOK := rat.IsInt() && rat.Num().Cmp(minI) >= 0 && rat.Num().Cmp(maxI) <= 0
		got, gotOK := NumberInt64(raw)
		if gotOK != wantOK || (wantOK && got != rat.Num().Int64()) {
			t.Fatalf("NumberInt64(%q) = %d,%v want %s,%v", raw, got, gotOK, rat.Num(), wantOK)
		}
	}
}

func randomNumber(r *rand.Rand) []byte {
	var b []byte
	if r.IntN(2) == 0 {
		b = append(b, '-')
	}
	digits := func(n int) {
		for range n {
			// Bias towards zeros so trailing/leading-zero handling is hit.
			if r.IntN(3) == 0 {
				b = append(b, '0')
			} else {
				b = append(b, byte('0'+r.IntN(10)))
			}
		}
	}
	if r.IntN(4) == 0 {
		b = append(b, '0')
	} else {
		b = append(b, byte('1'+r.IntN(9)))
		digits(r.IntN(22))
	}
	if r.IntN(2) == 0 {
		b = append(b, '.')
		digits(1 + r.IntN(8))
	}
	if r.IntN(2) == 0 {
		b = append(b, "eE"[r.IntN(2)])
		if r.IntN(2) == 0 {
			b = append(b, "+-"[r.IntN(2)])
		}
		b = strconv.AppendInt(b, int64(r.IntN(25)), 10)
	}
	return b
}

func TestSafeInteger(t *testing.T) {
	pass := map[string]int64{"5": 5, "5.0": 5, "2e3": 2000, "-0": 0, "1e-400": 0, "9007199254740991": 1<<53 - 1}
	for in, want := range pass {
		if n, ok := SafeInteger([]byte(in)); !ok || n != want {
			t.Errorf("SafeInteger(%s) = %d, %v; want %d", in, n, ok, want)
		}
	}
	for _, in := range []string{"1.5", "9007199254740992", "1e300", "1e400", `"5"`, "null", "", "true"} {
		if n, ok := SafeInteger([]byte(in)); ok {
			t.Errorf("SafeInteger(%s) = %d, true; want false", in, n)
		}
	}
}

func TestKindPhrase(t *testing.T) {
	for k, want := range map[Kind]string{Absent: "nothing (member absent)", String: "a string", Object: "an object", Number: "a number", Null: "null"} {
		if got := k.Phrase(); got != want {
			t.Errorf("%v.Phrase() = %q, want %q", k, got, want)
		}
	}
}
