package fuzz

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
	"pgregory.net/rapid"
)

var (
	genText  = rapid.StringN(0, 12, -1)
	genRaw   = rapid.SampledFrom([]json.RawMessage{json.RawMessage(`{"x":[1,2]}`), json.RawMessage(`"s"`), json.RawMessage(`null`), json.RawMessage(`12.5`), json.RawMessage(`[]`)})
	genWidth = rapid.Int64Range(0, 1<<31)
)

func genDims() *rapid.Generator[*sdkproto.Dimensions] {
	return rapid.Ptr(rapid.Custom(func(t *rapid.T) sdkproto.Dimensions {
		return sdkproto.Dimensions{Width: genWidth.Draw(t, "w"), Height: genWidth.Draw(t, "h")}
	}), true)
}

func genRef() *rapid.Generator[sdkproto.ImageAttachmentRef] {
	return rapid.Custom(func(t *rapid.T) sdkproto.ImageAttachmentRef {
		return sdkproto.ImageAttachmentRef{
			AttachmentID: genText.Draw(t, "id"), MediaType: rapid.SampledFrom([]string{"image/png", "image/gif", ""}).Draw(t, "mt"),
			Bytes: genWidth.Draw(t, "bytes"), Width: genWidth.Draw(t, "w"), Height: genWidth.Draw(t, "h"),
			Name: genText.Draw(t, "name"), OriginalDimensions: genDims().Draw(t, "orig"),
		}
	})
}

// genBlock generates every variant of ContentBlock, nested tool results
// included, with the constructors users call.
func genBlock(depth int) *rapid.Generator[sdkproto.ContentBlock] {
	return rapid.Custom(func(t *rapid.T) sdkproto.ContentBlock {
		max := 5
		if depth > 2 {
			max = 4
		}
		switch rapid.IntRange(0, max).Draw(t, "variant") {
		case 0:
			return sdkproto.TextBlock(genText.Draw(t, "text"))
		case 1:
			return sdkproto.ReasoningBlock(genText.Draw(t, "text"))
		case 2:
			return sdkproto.ImageBlock(genRef().Draw(t, "ref"))
		case 3:
			return sdkproto.ImageUpload(rapid.SampledFrom([]string{"image/png", "image/webp", ""}).Draw(t, "mime"),
				rapid.SliceOfN(rapid.Byte(), 1, 20).Draw(t, "data"))
		case 4:
			return sdkproto.ToolCallBlock(genText.Draw(t, "id"), genText.Draw(t, "name"), genText.Draw(t, "args"))
		default:
			return sdkproto.ToolResultBlock(genText.Draw(t, "call"), rapid.SliceOfN(genBlock(depth+1), 0, 3).Draw(t, "content"), rapid.Bool().Draw(t, "isError"))
		}
	})
}

func genMessage() *rapid.Generator[sdkproto.Message] {
	return rapid.Custom(func(t *rapid.T) sdkproto.Message {
		src := sdkproto.MessageSource{Kind: rapid.SampledFrom([]string{"user", "plugin", "model", "tool", "other"}).Draw(t, "kind")}
		switch src.Kind {
		case "plugin":
			src.Plugin, src.Form, src.Summary = genText.Draw(t, "plugin"), rapid.SampledFrom([]string{"notice", "recall", ""}).Draw(t, "form"), genText.Draw(t, "summary")
		case "model":
			src.Provider, src.Model = genText.Draw(t, "provider"), genText.Draw(t, "model")
			if rapid.Bool().Draw(t, "replay") {
				src.Replay = genRaw.Draw(t, "replayState")
			}
		case "tool":
			src.CallID = genText.Draw(t, "callId")
		}
		return sdkproto.Message{ID: genText.Draw(t, "id"), Role: rapid.SampledFrom([]string{"user", "assistant", "system"}).Draw(t, "role"),
			Content: rapid.SliceOfN(genBlock(0), 0, 4).Draw(t, "content"), Source: src}
	})
}

func genEvent() *rapid.Generator[sdkproto.Event] {
	return rapid.Custom(func(t *rapid.T) sdkproto.Event {
		e := sdkproto.Event{
			Type: rapid.SampledFrom(append(sdkproto.KnownEventTypes(), "plugin/custom")).Draw(t, "type"),
			Seq:  rapid.Int64().Draw(t, "seq"), Time: rapid.Int64().Draw(t, "time"),
			Ignorable: rapid.Bool().Draw(t, "ignorable"),
		}
		if rapid.Bool().Draw(t, "hasData") {
			e.Data = genRaw.Draw(t, "data")
		}
		if rapid.Bool().Draw(t, "hasSeqs") {
			e.SourceEventSeqs = rapid.SliceOfN(rapid.Int64(), 0, 4).Draw(t, "seqs")
		}
		switch rapid.IntRange(0, 2).Draw(t, "surface") {
		case 1:
			e.SurfaceOp = sdkproto.AppendOp()
		case 2:
			e.SurfaceOp = sdkproto.ReplaceOp(rapid.Int64().Draw(t, "start"), rapid.Int64().Draw(t, "end"))
		}
		return e
	})
}

// checkRoundTrip encodes v, decodes it into a new value of its type, and
// compares the exported fields; the second encoding must equal the first.
func checkRoundTrip(t *rapid.T, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding %#v: %v", v, err)
	}
	p := reflect.New(reflect.TypeOf(v))
	if err := json.Unmarshal(b, p.Interface()); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	if d := sameExported(reflect.ValueOf(v), p.Elem(), reflect.TypeOf(v).Name()); d != "" {
		t.Fatalf("round trip of %s: %s", b, d)
	}
	if b2, _ := json.Marshal(p.Elem().Interface()); string(b2) != string(b) {
		t.Fatalf("encodings differ:\n%s\n%s", b, b2)
	}
}

// TestPropertySDKRoundTrip round-trips every sdkproto payload type built in
// Go, through generators that cover every variant and optional member.
func TestPropertySDKRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		switch rapid.IntRange(0, 10).Draw(rt, "type") {
		case 0:
			p := sdkproto.InitializeParams{Cwd: genText.Draw(rt, "cwd"), Provider: genText.Draw(rt, "provider"), Model: genText.Draw(rt, "model")}
			if rapid.Bool().Draw(rt, "effort") {
				p.ReasoningEffort = sdkproto.Effort(genText.Draw(rt, "e"))
			}
			if rapid.Bool().Draw(rt, "tokens") {
				p.MaxTokens = sdkproto.Tokens(rapid.Int64().Draw(rt, "n"))
			}
			checkRoundTrip(rt, p)
		case 1:
			checkRoundTrip(rt, sdkproto.InitializeResult{ServerInfo: sdkproto.ServerInfo{Name: genText.Draw(rt, "n"), Version: genText.Draw(rt, "v")}})
		case 2:
			checkRoundTrip(rt, sdkproto.SessionPromptParams{SessionID: genText.Draw(rt, "s"), ContentBlocks: rapid.SliceOfN(genBlock(0), 0, 4).Draw(rt, "blocks")})
		case 3:
			checkRoundTrip(rt, sdkproto.SessionPromptResult{MessageID: genText.Draw(rt, "m")})
		case 4:
			checkRoundTrip(rt, sdkproto.SessionEventParams{SessionID: genText.Draw(rt, "s"), Event: genEvent().Draw(rt, "event")})
		case 5:
			checkRoundTrip(rt, sdkproto.SessionStatusParams{SessionID: genText.Draw(rt, "s"), Status: rapid.SampledFrom([]sdkproto.Status{sdkproto.StatusIdle, sdkproto.StatusRunning}).Draw(rt, "st")})
		case 6:
			checkRoundTrip(rt, sdkproto.SubagentStartedParams{ParentSessionID: genText.Draw(rt, "p"), ChildSessionID: genText.Draw(rt, "c")})
		case 7:
			p := sdkproto.SubagentFinishedParams{Provider: genText.Draw(rt, "p"), AgentID: genText.Draw(rt, "a"),
				ParentSessionID: genText.Draw(rt, "ps"), ChildSessionID: genText.Draw(rt, "cs"),
				Status:     rapid.SampledFrom([]sdkproto.RunStatus{sdkproto.RunOK, sdkproto.RunError}).Draw(rt, "st"),
				StopReason: rapid.SampledFrom([]sdkproto.StopReason{sdkproto.StopCompleted, sdkproto.StopAborted, sdkproto.StopError, sdkproto.StopMaxTokens, sdkproto.StopRefusal, "plugin"}).Draw(rt, "stop")}
			if rapid.Bool().Draw(rt, "hasLast") {
				p.LastAssistantMessage = rapid.SliceOfN(genBlock(0), 0, 3).Draw(rt, "last")
			}
			checkRoundTrip(rt, p)
		case 8:
			checkRoundTrip(rt, genMessage().Draw(rt, "message"))
		case 9:
			checkRoundTrip(rt, genEvent().Draw(rt, "event"))
		default:
			checkRoundTrip(rt, genBlock(0).Draw(rt, "block"))
		}
	})
}
