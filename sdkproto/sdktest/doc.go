// Package sdktest is a scriptable DSH runtime for the tests of programs
// that drive one with package sdkproto: a test declares what the runtime
// does for each prompt, as a scripted.Script (text streamed in deltas,
// reasoning, tool calls and their results, a subagent with its own
// events, a refused prompt, a failed model call, usage, pauses on the
// test's clock, requests to the client), and gets a connected
// *sdkproto.Client, or a command that starts the runtime for a program
// that launches its own. It is to package sdkproto/scripted, the runtime
// that plays the script, what net/http/httptest is to net/http: the
// runtime is an sdkproto.Server whose Runtime is a scripted.Runtime, so
// its frames have the envelope, the seqs, the order and the status
// transitions of the real runtime's recorded turns
// (testdata/transcripts): this package's tests check that a scripted turn
// and the recorded turn it imitates are accepted alike by the transcript
// checker of dshrpc check and give Client.Run results of the same shape.
// It records every frame in both directions for the test's assertions,
// and fails the test when something is left running at its end.
//
// Package sdkproto/demo is the other scripted runtime: it answers each
// prompt by its text (/think, /tool, ...), for demos and interop tests;
// sdktest is scripted by the test, in Go. Package
// sdkproto/replay/replaytest connects a Client to a recorded conversation
// instead.
//
// # A test with the kit
//
// A program that summarises a file with the runtime:
//
//	// Summarise asks the runtime for a one-line summary of the file at path.
//	func Summarise(ctx context.Context, c *sdkproto.Client, path string) (string, error) {
//		text, err := os.ReadFile(path)
//		if err != nil {
//			return "", err
//		}
//		res, err := c.Run(ctx, "summary-"+filepath.Base(path),
//			sdkproto.TextBlock("Summarise in one line:\n\n"+string(text)))
//		if err != nil {
//			return "", err
//		}
//		if err := res.Err(); err != nil {
//			return "", fmt.Errorf("summarise %s: %w", path, err)
//		}
//		return res.FinalResponse, nil
//	}
//
// and its test, whole (this package's summarise_test.go runs it):
//
//	func TestSummarise(t *testing.T) {
//		path := filepath.Join(t.TempDir(), "notes.txt")
//		if err := os.WriteFile(path, []byte("The cat sat on the mat."), 0o644); err != nil {
//			t.Fatal(err)
//		}
//		rt := sdktest.NewRuntime(t, scripted.Script{Turns: []*scripted.Turn{
//			scripted.NewTurn().Text("A cat ", "sits."),
//			scripted.NewTurn().Text("A cat").MaxTokens(),
//		}})
//		c := rt.Client()
//
//		got, err := Summarise(t.Context(), c, path)
//		if err != nil || got != "A cat sits." {
//			t.Fatalf("Summarise = %q, %v", got, err)
//		}
//		rt.AssertPrompted(t, "Summarise in one line:\n\nThe cat sat on the mat.")
//
//		if _, err := Summarise(t.Context(), c, path); err == nil {
//			t.Fatal("Summarise of a turn cut at max-tokens succeeded")
//		}
//		rt.Check(t)
//	}
//
// rt.Client() is connected over two pipes and initialized
// (InitializeParams); the first prompt plays the first Turn, the second
// the second. The test's cleanup closes the Client (with the shutdown
// request, as Close does) and fails the test if the runtime or the Client
// left a goroutine running. rt.Check runs the transcript checker on the
// frames exchanged.
//
// # The script
//
// A scripted.Script lists the Turns, one a prompt, in the order the
// prompts arrive; a Turn is a list of actions built with scripted.NewTurn
// and its methods (package scripted documents each, and what the runtime
// sends around them):
//
//	scripted.NewTurn().
//		Reasoning("The user ", "asks for the date.").
//		ToolCall(scripted.ToolCall{Name: "bash", Arguments: `{"command":"date"}`, Output: "Mon Jan 5\n"}).
//		Text("It is ", "Monday.")
//
// A prompt past the script (no turn, no Script.Reply) is answered with
// -32603 and fails the test once it has ended, with the error of the
// prompt, numbered from 1 ("scripted: no turn scripted for prompt 3
// (session main), past the script's 2 turns"), at the line of the test
// that called NewRuntime, whether the runtime runs in process or through
// Command.
//
// # Time
//
// scripted.Turn.Pause waits on a timer of the runtime's goroutine.
// Called inside a testing/synctest bubble, NewRuntime runs the runtime in
// the bubble, so pauses take no real time and a test reads them on the
// fake clock:
//
//	synctest.Test(t, func(t *testing.T) {
//		rt := sdktest.NewRuntime(t, scripted.Script{Turns: []*scripted.Turn{
//			scripted.NewTurn().Text("Hel").Pause(90 * time.Second).Text("lo"),
//		}})
//		start := time.Now()
//		res, err := rt.Client().Run(t.Context(), "main", sdkproto.TextBlock("hi"))
//		// time.Since(start) == 90*time.Second
//	})
//
// Every wait of the package is bounded by MaxWait and fails the test
// saying what it waited for.
//
// # Assertions
//
// Frames returns every frame exchanged, in the order the runtime read or
// wrote it; Requests the client's requests of a method; Answers the
// client's answers to the runtime's requests (scripted.Turn.Ask); AssertPrompted
// checks that a prompt of a given text was sent; WaitFor waits until the
// frames satisfy a condition; Check runs the transcript checker.
//
// # Programs that start their runtime
//
// A program that launches its runtime (sdkproto.Launch of a command line)
// gets Command, the test binary started as the runtime: the package's
// TestMain calls Main, and the script travels to the process in a file.
//
//	func TestMain(m *testing.M) { sdktest.Main(m) }
//
//	func TestTool(t *testing.T) {
//		rt := sdktest.NewRuntime(t, scripted.Script{Turns: ...})
//		cmd := rt.Command() // or cmd.Path and cmd.Args as a command line
//		runTheProgram(t, cmd)
//		rt.AssertPrompted(t, "...") // the frames are complete once the process exited
//	}
//
// # Scripts in JSON
//
// A scripted.Script has a JSON form, documented on it, for scripts
// written by hand in any language: `dshrpc serve-script FILE` serves one
// on stdin and stdout, as a runtime for clients in other languages and
// for programs that start their runtime themselves; scripted.LoadScript
// reads one in Go. Command hands its script to the process in the same
// form.
//
// # A client that answers its runtime
//
// scripted.Turn.Ask sends the client a request and waits for its answer, as the
// approval flows that the protocol leaves room for would. A Client answers
// with the responders of its options (sdkproto.ClientOptions.Responders,
// made with sdkproto.Respond on a typed rpc.Method), and a request without
// one with -32601 "method not found: <method>", as the TypeScript client
// does:
//
//	approval := rpc.NewMethod[Ask, Decision]("approval/request")
//	rt := sdktest.NewRuntime(t, scripted.Script{Turns: []*scripted.Turn{
//		scripted.NewTurn().Ask("approval/request", Ask{Tool: "bash"}).Text("done"),
//	}})
//	c := rt.ClientWith(&sdkproto.ClientOptions{Responders: []sdkproto.Responder{
//		sdkproto.Respond(approval, func(ctx context.Context, a Ask) (Decision, error) {
//			return Decision{Approved: a.Tool != "bash"}, nil
//		}),
//	}})
//	// ... c.Run, then rt.Answers("approval/request")[0].Result is {"approved":false}
package sdktest
