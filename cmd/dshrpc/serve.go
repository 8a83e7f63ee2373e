package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // DecodeConfig for the demo attachment store
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/demo"
)

const serveUsage = `Usage: dshrpc serve-demo [--delay D] [--quiet]

Serve the built-in demo runtime on stdin/stdout, for clients in other
languages (and as a runtime for 'dshrpc run --runtime "dshrpc serve-demo"').
No model, no network: every prompt is echoed back as the assistant's answer,
with the event sequence of a real turn. Prompts starting with a command
change the script:

  /think X     a reasoning block, then X
  /tool X      calls the tool "echo" with {"text":X}, then answers
  /subagent X  runs X in a child session, then answers with its result
  /fail X      the model fails with X (turn/end kind error)
  /slow X      streams X word by word, slowly (to try Ctrl-C)

Images are admitted (png, jpeg, gif, webp) and kept in memory.
The process exits 0 after a shutdown request or at the end of its input.

A line that is not served gets no answer, as from the real runtime (a line
that is not JSON, not an object, a notification, a response to nothing, a
line without its LF at the end of the input); each is reported on stderr,
with why and how the line starts:

  dshrpc serve-demo: ignored an input line (not a JSON object): [1,2]

Flags:
  --delay D   pause between streamed deltas (default 0s)
` + quietUsage

func serveCmd(e *env, args []string) int {
	fs := newFlagSet("serve-demo")
	delay := fs.Duration("delay", 0, "")
	quiet := fs.Bool("quiet", false, "")
	pos, code, err := parseArgs(e, "serve-demo", serveUsage, fs, args, false)
	if err != nil {
		return code
	}
	if len(pos) > 0 {
		return usageError(e, "serve-demo", fmt.Errorf("unexpected argument %q", pos[0]))
	}
	if *delay < 0 {
		return usageError(e, "serve-demo", fmt.Errorf("--delay must not be negative, not %s", *delay))
	}
	// SIGTERM and SIGINT end the demo like the end of input (teardown,
	// exit 0), as the real runtime exits 0 on SIGTERM.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	drops := newDropReporter(e, "serve-demo", *quiet)
	err = newDemoServer(*delay, drops.onDrop()).Serve(ctx, drops.watch(e.stdin), e.stdout)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(e.stderr, "dshrpc serve-demo: %v\n", err)
		return exitRuntime
	}
	return exitOK
}

// newDemoServer is the demo runtime that both serve-demo and the
// in-process default of run serve, with an attachment store so that
// --image can be tried without a real runtime; onDrop, when set, hears of
// each line of the client's that is not served.
func newDemoServer(delay time.Duration, onDrop func(rpc.Drop)) *sdkproto.Server {
	rt := demo.NewRuntime(&demo.Options{Delay: delay})
	return sdkproto.NewServer(rt, &sdkproto.ServerOptions{Attachments: &memStore{}, OnDrop: onDrop})
}

// memStore is a minimal in-memory attachment store: it checks that each
// image's bytes match its declared type, as the local store does, and
// keeps nothing but references.
type memStore struct {
	mu    sync.Mutex
	bytes map[string][]byte
}

func (s *memStore) AcceptedMediaTypes() []string { return nil } // sdkproto.DefaultMediaTypes

// CheckBatch applies the local store's count limit.
func (s *memStore) CheckBatch(uploads []sdkproto.Upload) error {
	if len(uploads) > 20 {
		return fmt.Errorf("Too many images in one message (%d > 20).", len(uploads))
	}
	return nil
}

func (s *memStore) Store(_ context.Context, uploads []sdkproto.Upload) ([]sdkproto.ImageAttachmentRef, error) {
	refs := make([]sdkproto.ImageAttachmentRef, 0, len(uploads))
	for _, u := range uploads {
		if sniffImage(u.Data) != u.MimeType {
			return nil, errors.New("Declared image type does not match its bytes.")
		}
		sum := sha256.Sum256(u.Data)
		id := "sha256:" + hex.EncodeToString(sum[:])
		ref := sdkproto.ImageAttachmentRef{AttachmentID: id, MediaType: u.MimeType, Bytes: int64(len(u.Data))}
		// webp has no decoder in the standard library: its size stays 0.
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(u.Data)); err == nil {
			ref.Width, ref.Height = int64(cfg.Width), int64(cfg.Height)
		}
		s.mu.Lock()
		if s.bytes == nil {
			s.bytes = map[string][]byte{}
		}
		s.bytes[id] = u.Data
		s.mu.Unlock()
		refs = append(refs, ref)
	}
	return refs, nil
}

// sniffImage returns the media type of an image's bytes as the standard
// library's content sniffer sees it (it knows all four accepted types).
func sniffImage(data []byte) string {
	return http.DetectContentType(data)
}

// serveInProcess connects a demo server to the returned reader and writer
// pair through two io.Pipes: the client reads r and writes w. wait returns
// once the server has stopped (after the client closed w).
func serveInProcess(delay time.Duration) (r io.ReadCloser, w io.WriteCloser, wait func() error) {
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := newDemoServer(delay, nil).Serve(context.Background(), c2sR, s2cW)
		// The client sees the end of its input once the server is done.
		s2cW.Close()
		c2sR.Close()
		done <- err
	}()
	return s2cR, c2sW, func() error { return <-done }
}
