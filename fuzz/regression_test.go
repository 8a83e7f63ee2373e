package fuzz

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/sdkproto"
)

// Regressions of what the fuzz targets and properties found.

// TestRegressionInt64Extremes: integers near the bounds of int64 decoded
// as zero, as the float64 check of asInt rounded them out of range
// (TestPropertySDKRoundTrip, Event.Time = math.MaxInt64).
func TestRegressionInt64Extremes(t *testing.T) {
	for _, n := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, 1<<63 - 512} {
		b, _ := json.Marshal(sdkproto.Event{Type: "t", Seq: n, Time: n})
		var e sdkproto.Event
		if err := json.Unmarshal(b, &e); err != nil || e.Seq != n || e.Time != n {
			t.Errorf("%s decoded as seq %d time %d (%v)", b, e.Seq, e.Time, err)
		}
	}
	var e sdkproto.Event
	for _, s := range []string{`9223372036854775808`, `9.3e18`, `-9.3e18`, `1.5`} {
		if err := json.Unmarshal([]byte(`{"type":"t","seq":`+s+`}`), &e); err != nil || e.Seq != 0 {
			t.Errorf("seq %s decoded as %d (%v), want 0", s, e.Seq, err)
		}
	}
	if err := json.Unmarshal([]byte(`{"type":"t","seq":2e3,"time":-0}`), &e); err != nil || e.Seq != 2000 {
		t.Errorf("seq 2e3 decoded as %d (%v)", e.Seq, err)
	}
}

// TestRegressionNonObjectParamsRoundTrip: params that are not an object
// decode as an empty object, but encoded as an object with every required
// member written, which decoded to another value (contentBlocks [] instead
// of absent) (FuzzSDKPayloads, seeds "null", "[]", "\"append\"").
func TestRegressionNonObjectParamsRoundTrip(t *testing.T) {
	for _, in := range []string{`null`, `[]`, `"append"`, `5`} {
		var p sdkproto.SessionPromptParams
		if err := json.Unmarshal([]byte(in), &p); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(p)
		if string(b) != `{}` {
			t.Errorf("%s encodes as %s, want {} (what it stands for)", in, b)
		}
		p.SessionID = "s"
		b, _ = json.Marshal(p)
		var p2 sdkproto.SessionPromptParams
		if err := json.Unmarshal(b, &p2); err != nil || p2.SessionID != "s" || p2.ContentBlocks != nil {
			t.Errorf("%s changed encodes as %s, decoded %+v (%v)", in, b, p2, err)
		}
	}
}

// TestRegressionDeepContentIsBounded: content blocks nested in tool
// results hundreds of levels deep took time growing faster than the cube
// of the depth to decode (500 levels, 17 KB: 22 s; 1000 levels: 2 min), a
// hang any peer could cause with one session/prompt or session.event.
// Blocks deeper than a few levels are now kept verbatim, undecoded.
func TestRegressionDeepContentIsBounded(t *testing.T) {
	const n = 3000
	s := strings.Repeat(`{"type":"tool-result","toolCallId":"c","content":[`, n) + `{"type":"text","text":"x"}` + strings.Repeat(`]}`, n)
	start := time.Now()
	var b sdkproto.ContentBlock
	if err := json.Unmarshal([]byte(s), &b); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(b)
	if err != nil || string(out) != s {
		t.Fatalf("bytes not kept: %v", err)
	}
	// Bounded decoding takes milliseconds here; unbounded, 3000 levels
	// would take hours. The bound tells the two apart on any machine.
	d := time.Since(start)
	t.Logf("decoding and encoding %d levels took %v", n, d)
	if d > time.Minute {
		t.Fatalf("decoding %d levels took %v", n, d)
	}
	depth := 0
	for c := &b; len(c.Content) == 1; c = &c.Content[0] {
		depth++
	}
	if depth == 0 || depth > 8 {
		t.Fatalf("%d levels decoded", depth)
	}
}
