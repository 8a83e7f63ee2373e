package main

import (
	"encoding/json"
	"fmt"

	"github.com/linerpc/linerpc/sdkproto"
)

const schemaUsage = `Usage: dshrpc schema

Print the OpenRPC 1.3 document of the DSH protocol on stdout, as indented
JSON, then exit 0 (the same bytes every time):

  dshrpc schema > dsh.openrpc.json

It describes the three requests a client sends (initialize, session/prompt,
shutdown) and the four notifications the runtime sends (session.event,
session.status, subagent.started, subagent.finished), the latter as methods
without a result. The member "x-dsh-direction" of each method says which end
sends it: "client-to-runtime" or "runtime-to-client". Params and results are
described by JSON Schema (draft-07) as the contract (docs/wire.md) states
them, the shared schemas in "components": required members, enums, constant
values, patterns (an absolute cwd, canonical base64 for an image upload),
and unions by their tag (content blocks, events, stream chunks); unknown
members are allowed, and the unions the runtime may extend stay open. Each
request lists the errors the runtime answers it with (-32603 and the
runtime's texts) and an example recorded from the real runtime. Any OpenRPC
or JSON Schema tool can validate frames with it.
`

func schemaCmd(e *env, args []string) int {
	fs := newFlagSet("schema")
	pos, code, err := parseArgs(e, "schema", schemaUsage, fs, args, false)
	if err != nil {
		return code
	}
	if len(pos) > 0 {
		return usageError(e, "schema", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	b, err := json.MarshalIndent(sdkproto.OpenRPCDocument(), "", "  ")
	if err != nil {
		fmt.Fprintf(e.stderr, "dshrpc schema: %v\n", err) // a document that does not encode: a bug
		return exitRuntime
	}
	if _, err := e.stdout.Write(append(b, '\n')); err != nil {
		fmt.Fprintf(e.stderr, "dshrpc schema: %v\n", err)
		return exitRuntime
	}
	return exitOK
}
