package transcript

import (
	"maps"
	"slices"
)

// Dir is the direction a frame was sent in.
type Dir string

// The directions of frames, as a transcript names them.
const (
	Unknown         Dir = ""    // raw frames: inferred from the method where it can be
	ClientToRuntime Dir = "c2s" // what the client wrote
	RuntimeToClient Dir = "s2c" // what the runtime wrote
)

// Short names for the directions, as messages print them.
const (
	c2s = ClientToRuntime
	s2c = RuntimeToClient
)

// label names a frame's direction at the start of a message.
func (d Dir) label() string {
	if d == Unknown {
		return ""
	}
	return string(d) + " "
}

// Kind is the kind of a finding, as printed.
type Kind string

// Problem kinds: a frame breaks the wire contract.
const (
	Malformed         Kind = "malformed"
	UnknownMethod     Kind = "unknown-method"
	BadPayload        Kind = "bad-payload"
	UnmatchedResponse Kind = "unmatched-response"
	UnansweredRequest Kind = "unanswered-request"
	SeqOrder          Kind = "seq-order"
)

// Warning kinds (see Kind.Warning).
const (
	SeqGap        Kind = "seq-gap"
	EarlyPrompt   Kind = "early-prompt"
	RunUnfinished Kind = "run-unfinished"
	NotChecked    Kind = "not-checked"
)

// Warning reports a kind that need not fail a check: no client depends on
// it (the SDK clients do not check seqs), the contract leaves it to the
// runtime (HEAD accepts a prompt before initialize), or the transcript
// may just have been cut short.
func (k Kind) Warning() bool {
	switch k {
	case SeqGap, EarlyPrompt, RunUnfinished, NotChecked:
		return true
	}
	return false
}

// Finding is one frame (or transcript line) that breaks a rule.
type Finding struct {
	Line    int    // the line of the transcript, from 1
	Kind    Kind   // the rule broken
	Message string // what is wrong, in prose
}

// Counts are what a check has seen. Lines are counted by Read only.
type Counts struct {
	Lines, Frames                      int
	Requests, Responses, Notifications int
	Bad                                int // frames that are none of the three
	Findings                           map[Kind]int
}

// add counts one finding.
func (c *Counts) add(k Kind) {
	if c.Findings == nil {
		c.Findings = map[Kind]int{}
	}
	c.Findings[k]++
}

// Problems returns how many findings are not warnings.
func (c Counts) Problems() int {
	n := 0
	for k, v := range c.Findings {
		if !k.Warning() {
			n += v
		}
	}
	return n
}

// Warnings returns how many findings are warnings.
func (c Counts) Warnings() int {
	n := 0
	for k, v := range c.Findings {
		if k.Warning() {
			n += v
		}
	}
	return n
}

// Kinds returns the kinds found, sorted.
func (c Counts) Kinds() []Kind { return slices.Sorted(maps.Keys(c.Findings)) }

// Add adds o to c, for a total of several transcripts.
func (c *Counts) Add(o Counts) {
	c.Lines += o.Lines
	c.Frames += o.Frames
	c.Requests += o.Requests
	c.Responses += o.Responses
	c.Notifications += o.Notifications
	c.Bad += o.Bad
	for k, v := range o.Findings {
		if c.Findings == nil {
			c.Findings = map[Kind]int{}
		}
		c.Findings[k] += v
	}
}
