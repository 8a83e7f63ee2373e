package sdktest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/scripted"
	"github.com/linerpc/linerpc/sdkproto/sdktest"
)

// The program of the package documentation's tour, and its tests.

// Summarise asks the runtime for a one-line summary of the file at path.
func Summarise(ctx context.Context, c *sdkproto.Client, path string) (string, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	res, err := c.Run(ctx, "summary-"+filepath.Base(path),
		sdkproto.TextBlock("Summarise in one line:\n\n"+string(text)))
	if err != nil {
		return "", err
	}
	if err := res.Err(); err != nil {
		return "", fmt.Errorf("summarise %s: %w", path, err)
	}
	return res.FinalResponse, nil
}

func TestSummarise(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte("The cat sat on the mat."), 0o644); err != nil {
		t.Fatal(err)
	}
	rt := sdktest.NewRuntime(t, scripted.Script{Turns: []*scripted.Turn{
		scripted.NewTurn().Text("A cat ", "sits."),
		scripted.NewTurn().Text("A cat").MaxTokens(),
	}})
	c := rt.Client()

	got, err := Summarise(t.Context(), c, path)
	if err != nil || got != "A cat sits." {
		t.Fatalf("Summarise = %q, %v", got, err)
	}
	rt.AssertPrompted(t, "Summarise in one line:\n\nThe cat sat on the mat.")

	if _, err := Summarise(t.Context(), c, path); err == nil {
		t.Fatal("Summarise of a turn cut at max-tokens succeeded")
	}
	rt.Check(t)
}
