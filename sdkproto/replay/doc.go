// Package replay serves a recorded DSH SDK conversation as a runtime: the
// client's frames are checked against the recording, in order, and
// answered with the responses and notifications the real runtime wrote.
// It is a runtime for tests and demonstrations that needs no model, no
// network and no Node, and whose every frame is one the real runtime sent.
//
// # Recordings
//
// Load reads any of the three forms that dshrpc check reads:
//
//   - a transcript, one {"dir":"c2s"|"s2c","frame":"<line>"} object a
//     line, as testdata/transcripts holds them;
//   - a tap log, the same with a "t" member, as dshrpc tap writes it
//     (a frame the log cut short cannot be replayed: Load refuses it; an
//     unterminated last line, which no reader accepts, is left out);
//   - raw frames, one JSON-RPC frame a line, each with its direction
//     inferred (requests and unknown notifications come from the client,
//     session.event, session.status and subagent.* from the runtime, a
//     response from the side that did not send the request it answers)
//     or given by a "c2s " or "s2c " before it (also "C→S " and "S→C ",
//     as docs/wire.md writes them): a request of the runtime's, which a
//     client answers with a responder (sdkproto.ClientOptions.Responders),
//     needs its s2c.
//
// Line numbers, in messages and in Frame.Line, are those of the file.
//
// # Serving
//
// Recording.Serve plays the runtime's side on one connection. Each frame
// the client sends must be the next client frame of the recording: the
// same kind (request, notification, response), the same method, and the
// same params, compared as JSON values (numbers by value; absent and null
// params are {}, as the runtime reads them). Client frames that the
// recording shows written back to back, with no runtime frame between
// them, may come in any order among themselves: a client that runs two
// prompts at once sends them in either.
//
// What a new client legitimately changes is rewritten rather than
// compared:
//
//   - request ids: each response carries the id of the client's request
//     it answers, byte for byte;
//   - session ids: the first frame naming a recorded session (the
//     sessionId of a prompt) binds it to the client's id, and every
//     frame the runtime writes about that session (params.sessionId,
//     parentSessionId, childSessionId) carries the client's id; a session
//     is bound once, to one id;
//   - the workspace: the cwd of initialize is not compared, and where the
//     recorded cwd appears in the runtime's frames (the system prompt of
//     request/header, paths in the workspace) the client's is written
//     instead (unless the recorded one is as short as "/").
//
// Message ids are not the client's to choose: the runtime mints the
// messageId of a prompt, and the recording's session/prompt result and
// receipt (agent/inbox/spliced, inserted[].id) carry the same one, so a
// replay echoes them as recorded and a client finds its receipt.
//
// A runtime frame is written once the client frame that caused it has
// been received: a response once its request has; an event, a status or
// a request of a session once the latest client frame about that session
// (or its root, for a subagent's child) before it in the recording has,
// which is a prompt to it or the answer to a runtime request about it;
// any other frame once the client frame before it has. Runtime requests
// are written with their recorded ids, and the client's response must
// carry the same id and the recorded result or error. Within that, frames keep the
// order of the recording; a frame whose cause has not come yet lets the
// frames behind it that are ready go first, as a runtime serving two
// sessions would. Client frames that arrive together (already read when
// the first is matched) are matched together before anything is
// written, so a client that writes as the recorded one did gets the
// recorded order exactly.
//
// When the client departs from the recording (a frame that is not the
// one expected, a frame after the recording's last, an input that ends
// before the recording's client frames do), Serve answers a departing
// request with a JSON-RPC error (-32603, the Departure's text) and returns
// a *Departure naming the line of the recording and what differed. After
// the recording's last frame, Serve returns nil once the client's input
// ends, or at once when that last client frame was a shutdown request, as
// the runtime exits after answering it.
//
// The helpers for tests are in package sdkproto/replay/replaytest, as
// those of net/http are in net/http/httptest: replaytest.Client is a
// *sdkproto.Client connected in process to a replay, with cleanup and a
// goroutine leak check on the testing.TB, failing the test unless the
// client followed the recording; replaytest.Start does the same and lets
// the test take Serve's error, for tests of departures. This package does
// not import package testing. The dshrpc command serves a recording on
// stdio with dshrpc serve-replay FILE.
package replay
