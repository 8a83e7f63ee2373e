package sdkproto_test

import (
	"strings"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
)

// rulesBroken returns the messages of the rules err says were broken.
func rulesBroken(err error) []string {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// Each notification's params report every rule they break, one error
// each, and nothing when they hold.
func TestNotificationChecks(t *testing.T) {
	note := func(method, params string) sdkproto.Notification {
		return sdkproto.Notification{Method: method, Params: []byte(params)}
	}
	check := func(n sdkproto.Notification) error {
		switch n.Method {
		case "session.status":
			p, err := n.SessionStatus()
			if err != nil {
				return err
			}
			return p.Check()
		case "subagent.started":
			p, err := n.SubagentStarted()
			if err != nil {
				return err
			}
			return p.Check()
		case "subagent.finished":
			p, err := n.SubagentFinished()
			if err != nil {
				return err
			}
			return p.Check()
		}
		p, err := n.SessionEvent()
		if err != nil {
			return err
		}
		return p.Event.Check()
	}
	cases := []struct {
		n    sdkproto.Notification
		want []string
	}{
		{note("session.status", `{"sessionId":"s","status":"idle"}`), nil},
		{note("session.status", `{"sessionId":5,"status":"idle"}`), []string{"session.status: sessionId must be a string, got a number"}},
		{note("session.status", `{"sessionId":"s"}`), []string{`session.status: status must be "running" or "idle", got nothing (member absent)`}},
		{note("subagent.started", `{"parentSessionId":"p","childSessionId":"c"}`), nil},
		{note("subagent.started", `{"parentSessionId":""}`), []string{
			`subagent.started: parentSessionId must be a non-empty string, got ""`,
			"subagent.started: childSessionId must be a non-empty string, got nothing (member absent)"}},
		{note("subagent.finished", `{"provider":"spawn","agentId":"a","parentSessionId":"p","childSessionId":"c","status":"ok","stopReason":"completed","lastAssistantMessage":[{"type":"text","text":"x"}]}`), nil},
		{note("subagent.finished", `{"provider":"spawn","agentId":"a","parentSessionId":"p","childSessionId":"c","status":"done","lastAssistantMessage":[1]}`), []string{
			"subagent.finished: stopReason must be a string, got nothing (member absent)",
			`subagent.finished: status must be "ok" or "error", got "done"`,
			"subagent.finished: lastAssistantMessage must be an array of content blocks, got [1]"}},
		{note("session.event", `{"sessionId":"s","event":{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}}`), nil},
		{note("session.event", `{"sessionId":"s","event":{"type":"turn/start","seq":9223372036854775808,"time":1.5,"data":[]}}`), []string{
			"session.event turn/start: seq must be an integer, got 9223372036854775808",
			"session.event turn/start: time must be an integer (epoch ms), got 1.5",
			"session.event turn/start: data must be an object, got []"}},
		{note("session.event", `{"sessionId":"s","event":{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{}}}}`), []string{
			"session.event turn/end: data does not decode: "}},
	}
	for _, tc := range cases {
		got := rulesBroken(check(tc.n))
		ok := len(got) == len(tc.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.HasPrefix(got[i], tc.want[i])
		}
		if !ok {
			t.Errorf("%s %s:\n got %q\nwant %q", tc.n.Method, tc.n.Params, got, tc.want)
		}
	}
}
