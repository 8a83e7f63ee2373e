package sdkproto

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// RunResult is what Run collected over one owned activity interval: from
// the receipt of the prompt to the root session's next idle.
type RunResult struct {
	SessionID string
	MessageID string // the id session/prompt returned
	// FinalResponse is the text of the last assistant/message among
	// Events ("" when that message has no text, even if an earlier one had).
	// It may include output of other work queued on the session.
	FinalResponse string
	// Events are the root session's events, in order, from the receipt on.
	Events []Event
	// Notifications are all the notifications of the session tree
	// collected, in order (root events, statuses, children's events,
	// subagent.started/finished).
	Notifications []Notification
	// FinishReason is data.reason.kind of the last root turn/end (Python's
	// finish_reason); "" when there was none or it was not a string (where
	// Python raises, Run reports nothing, as TypeScript does).
	FinishReason TurnEndKind
}

// Err says how the turn ended: nil when FinishReason is completed (the
// root session's last turn/end of the interval said so), else a
// *TurnFailedError of that kind: error (Reason.Error is the model's
// failure), aborted (Reason.Reason says who aborted it), max-tokens (the
// reply was cut at the output cap; FinalResponse holds what came),
// blocked, interrupted, or a kind a plugin added; or of no kind when no
// turn/end said how the turn ended. Reason is decoded from that turn/end
// in Events. The runtime reports a turn's failure only this way, in the
// events of a turn it ran, once session/prompt has succeeded; Run's own
// error says that the run could not be followed, and stays nil for it.
// Err of a nil *RunResult is nil.
func (r *RunResult) Err() error {
	if r == nil || r.FinishReason == TurnCompleted {
		return nil
	}
	e := &TurnFailedError{SessionID: r.SessionID, MessageID: r.MessageID, Kind: r.FinishReason}
	for i := len(r.Events) - 1; i >= 0; i-- {
		if r.Events[i].Type == EventTurnEnd {
			if d, err := r.Events[i].TurnEnd(); err == nil && d.Reason.Kind == e.Kind {
				e.Reason = d.Reason
			}
			break
		}
	}
	return e
}

// Run prompts sessionID with blocks and waits for the turn to end. Its
// error says that the run could not be followed; a turn that ran and
// failed (a model error, an abort, the output cap) is no error of Run's,
// as in the TypeScript and Python clients, but of its result's:
//
//	res, err := c.Run(ctx, "main", sdkproto.TextBlock("say hi"))
//	if err == nil {
//		err = res.Err() // nil only when the turn completed: see RunResult.Err
//	}
//
// Run waits for the interval the prompt owns, as the TypeScript run() does
// (docs/wire.md §6.3): it subscribes to the session tree before sending
// session/prompt, skips everything before the receipt (the root's
// agent/inbox/spliced inserting the returned message id), collects the
// tree's notifications from the receipt on, and stops at the root
// session's first idle after it. A root event after the receipt
// must be an envelope (and an assistant/message must carry well-formed
// content), else Run fails with the upstream *ProtocolError.
//
// Cancelling ctx stops waiting (the turn goes on in the runtime: there is
// no cancel method). Once session/prompt was answered, a wait that ends
// without the interval (ctx ended, the runtime went away) fails with a
// *RunWaitError saying what was still awaited, wrapping the cause.
//
// blocks must hold at least one block: without any, Run sends nothing and
// returns an error wrapping ErrEmptyPrompt (see Prompt).
func (c *Client) Run(ctx context.Context, sessionID string, blocks ...ContentBlock) (*RunResult, error) {
	return c.RunFunc(ctx, sessionID, nil, blocks...)
}

// RunFunc is Run, calling each (when not nil) with every collected
// notification as it arrives, before the next is read: this is how a
// caller renders a reply while it streams (see Notification.TextDelta).
// An error from each stops the run and is returned. As with Run, a turn
// that failed is reported by the result's Err, not by RunFunc's error.
//
// Like Run, RunFunc keeps every event and notification of the interval in
// the RunResult it returns, so its memory grows with the turn; Stream keeps
// none of them.
func (c *Client) RunFunc(ctx context.Context, sessionID string, each func(Notification) error, blocks ...ContentBlock) (*RunResult, error) {
	return c.run(ctx, sessionID, each, true, blocks...)
}

// run is Run; keep says whether the result collects the events and
// notifications (Stream only yields them).
func (c *Client) run(ctx context.Context, sessionID string, each func(Notification) error, keep bool, blocks ...ContentBlock) (*RunResult, error) {
	if err := checkPromptBlocks(sessionID, blocks); err != nil {
		return nil, err
	}
	sub := c.SubscribeSessionTree(sessionID)
	defer sub.Close()
	msgID, err := c.Prompt(ctx, sessionID, blocks...)
	if err != nil {
		return nil, err
	}
	res := &RunResult{SessionID: sessionID, MessageID: msgID}
	receipt := false
	var lastAssistant Event // the zero Event has no content
	for {
		n, err := sub.Next(ctx)
		if err != nil {
			return nil, &RunWaitError{SessionID: sessionID, MessageID: msgID, Receipt: receipt, Err: err}
		}
		var ev *SessionEventParams
		if sid, _ := n.SessionID(); sid == sessionID && n.Method == SessionEvent.Name() {
			p, _ := n.SessionEvent()
			ev = &p
		}
		if !receipt {
			// Before the receipt, anything (malformed events included)
			// belongs to earlier work.
			if ev == nil || ev.CheckEnvelope() != nil || !ev.Event.ReceiptFor(msgID) {
				continue
			}
			receipt = true
		}
		if ev != nil {
			if err := ev.CheckRunEvent(); err != nil {
				return nil, err
			}
			if keep {
				res.Events = append(res.Events, ev.Event)
			}
			switch ev.Event.Type {
			case EventAssistantMessage:
				if keep {
					lastAssistant = ev.Event
				}
			case EventTurnEnd:
				res.FinishReason, _ = ev.Event.TurnEndReasonKind()
			}
		}
		if keep {
			res.Notifications = append(res.Notifications, n)
		}
		if each != nil {
			if err := each(n); err != nil {
				return nil, err
			}
		}
		if isRootIdle(n, sessionID) {
			break
		}
	}
	res.FinalResponse = FinalText(assistantContent(lastAssistant))
	return res, nil
}

// errStreamStopped ends a run whose Stream consumer stopped iterating.
var errStreamStopped = errors.New("sdkproto: stream stopped")

// Stream is Run as an iterator: it yields every collected notification as
// it arrives, then ends; a failure to follow the run is yielded last, with
// a zero Notification. As with Run, a turn that ran and failed is no such
// failure: the loop ends without an error, and the root session's turn/end
// says how the turn ended, which one line in the loop checks:
//
//	for n, err := range c.Stream(ctx, "main", sdkproto.TextBlock("say hi")) {
//		if err == nil {
//			err = n.TurnErr("main") // nil but for the root's turn/end of a turn that did not complete
//		}
//		if err != nil {
//			return err
//		}
//		...
//	}
//
// (RunFunc streams as well and returns the result, whose Err says it.)
// Breaking out of the loop stops waiting for the run (the turn goes on in
// the runtime). Without a content block, Stream yields the error Run
// returns and sends nothing.
//
// Stream keeps nothing it has yielded: its memory is that of the notifications the runtime sent and
// the loop has not taken yet, which the subscription queues (at most
// ClientOptions.MaxQueued of them).
func (c *Client) Stream(ctx context.Context, sessionID string, blocks ...ContentBlock) iter.Seq2[Notification, error] {
	return func(yield func(Notification, error) bool) {
		_, err := c.run(ctx, sessionID, func(n Notification) error {
			if !yield(n, nil) {
				return errStreamStopped
			}
			return nil
		}, false, blocks...)
		if err != nil && !errors.Is(err, errStreamStopped) {
			yield(Notification{}, err)
		}
	}
}

// TurnErr reports a turn of session sessionID that did not complete: for a
// session.event of that session whose event is a turn/end with a
// data.reason.kind other than completed, it returns a *TurnFailedError
// with the kind and the reason (its MessageID empty: a notification does
// not say which prompt the turn served); for every other notification,
// a completed turn/end included, nil. A turn/end whose kind is not a
// string gives a *TurnFailedError without a Kind. Passing a Stream's root
// session leaves out the turns of its subagents (the parent's tool result
// reports those). A prompt to a busy session has the turn in progress end
// within its interval before its own: RunResult.Err looks at the last
// turn/end only.
func (n Notification) TurnErr(sessionID string) error {
	if n.Method != SessionEvent.Name() {
		return nil
	}
	if sid, ok := n.SessionID(); !ok || sid != sessionID {
		return nil
	}
	p, err := n.SessionEvent()
	if err != nil || p.Event.Type != EventTurnEnd {
		return nil
	}
	kind, _ := p.Event.TurnEndReasonKind()
	if kind == TurnCompleted {
		return nil
	}
	e := &TurnFailedError{SessionID: sessionID, Kind: kind}
	if d, err := p.Event.TurnEnd(); err == nil && d.Reason.Kind == kind {
		e.Reason = d.Reason
	}
	return e
}

// checkPromptBlocks refuses, before anything is sent, the prompt content
// the contract refuses: none (testdata/vectors, prompt-empty-content).
func checkPromptBlocks(sessionID string, blocks []ContentBlock) error {
	if len(blocks) == 0 {
		return fmt.Errorf("%w: the prompt to session %q has none (pass them after the session id, such as sdkproto.TextBlock(text))", ErrEmptyPrompt, sessionID)
	}
	return nil
}

// isRootIdle reports a session.status idle for the root session.
func isRootIdle(n Notification, root string) bool {
	if n.Method != SessionStatus.Name() {
		return false
	}
	sid, _ := n.SessionID()
	status, _ := n.str("status")
	return sid == root && Status(status) == StatusIdle
}

// assistantContent returns data.message.content of an assistant/message
// (already checked to be an array of typed objects).
func assistantContent(e Event) []ContentBlock {
	blocks, _ := decodeBlocks(e.dataAt("message", "content"))
	return blocks
}
