package validator_test

import (
	"context"
	"encoding/json"
	"net"
	"testing"

	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/openrpc/validator"
	"github.com/linerpc/linerpc/rpc"
)

// The cost of validation per call: a round trip over net.Pipe with and
// without Options.CheckParams, and the check alone. The params are a
// DSH-shaped prompt (a string and an array of two-member objects).

type prompt struct {
	SessionID     string  `json:"sessionId"`
	ContentBlocks []block `json:"contentBlocks"`
}

type block struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type promptResult struct {
	MessageID string `json:"messageId"`
}

var (
	benchPrompt = rpc.NewMethod[prompt, promptResult]("session/prompt")
	helloPrompt = prompt{SessionID: "main", ContentBlocks: []block{{Type: "text", Text: "hello"}}}
)

func benchRegistry() *rpc.Registry {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, benchPrompt, func(context.Context, prompt) (promptResult, error) {
		return promptResult{MessageID: "m-1"}, nil
	})
	return reg
}

func benchValidator(b *testing.B, reg *rpc.Registry) *validator.Validator {
	doc, err := openrpc.Describe(openrpc.Info{Title: "bench", Version: "1"}, reg.Methods()...)
	if err != nil {
		b.Fatal(err)
	}
	v, err := validator.New(doc)
	if err != nil {
		b.Fatal(err)
	}
	return v
}

func BenchmarkRoundTripValidation(b *testing.B) {
	for _, validate := range []bool{false, true} {
		name := "off"
		if validate {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			reg := benchRegistry()
			opts := &rpc.Options{Handler: reg}
			if validate {
				opts.CheckParams = benchValidator(b, reg).CheckParams
			}
			x, y := net.Pipe()
			server := rpc.NewConn(x, x, opts)
			client := rpc.NewConn(y, y, nil)
			server.Start()
			client.Start()
			b.Cleanup(func() {
				client.Close()
				server.Close()
				x.Close()
				y.Close()
				client.Wait()
				server.Wait()
			})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := benchPrompt.Call(ctx, client, helloPrompt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCheckParams(b *testing.B) {
	v := benchValidator(b, benchRegistry())
	raw, _ := json.Marshal(helloPrompt)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.CheckParams("session/prompt", raw); err != nil {
			b.Fatal(err)
		}
	}
}
