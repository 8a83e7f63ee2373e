// Package testservice is a small API that uses every feature of the
// descriptions that OpenRPC tools understand (params by name, nested,
// optional, named and self-described types, a notification, no params,
// errors, examples; not recursive types, which schema-utils-js cannot
// dereference)
// with handlers that keep their results to their schemas, for the tests
// of package openrpc, the HTTP transport and the OpenRPC tools'
// interop tests.
package testservice

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/rpc"
)

// Info is the document's info.
var Info = openrpc.Info{Title: "linerpc test service", Version: "1.0.0", Description: "Every feature of a description, served."}

// Color gives its own schema: one of three names.
type Color string

// JSONSchema says Color is one of three names.
func (Color) JSONSchema() *openrpc.Schema {
	return &openrpc.Schema{Type: openrpc.Types{"string"}, Enum: []json.RawMessage{
		json.RawMessage(`"red"`), json.RawMessage(`"green"`), json.RawMessage(`"blue"`)}}
}

// AddParams are the params of add.
type AddParams struct {
	A int `json:"a" jsonschema:"the first addend"`
	B int `json:"b" jsonschema:"the second addend"`
}

// Sum is add's result.
type Sum struct {
	Sum int `json:"sum"`
}

// Point is a place on a grid.
type Point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// Rect is a rectangle, a named type used twice.
type Rect struct {
	Min Point `json:"min"`
	Max Point `json:"max"`
}

// AreaParams are the params of rect/area.
type AreaParams struct {
	Rect  Rect   `json:"rect"`
	Label string `json:"label,omitempty"`
}

// Area is rect/area's result.
type Area struct {
	Area  int    `json:"area"`
	Label string `json:"label,omitempty"`
}

// PaintParams are the params of paint.
type PaintParams struct {
	Color  Color    `json:"color"`
	Tags   []string `json:"tags,omitempty"`
	Strong *bool    `json:"strong,omitempty"`
}

// Paint is paint's result.
type Paint struct {
	Color Color  `json:"color"`
	Note  string `json:"note"`
}

// LogEntry is the params of the notification log.
type LogEntry struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

// Limit is the data of add's overflow error.
type Limit struct {
	Max int `json:"max"`
}

// CodeOverflow is the error add answers when the sum is too large.
const CodeOverflow = 1

// MaxSum is the largest sum add answers.
const MaxSum = 1 << 30

// The API.
var (
	Add = rpc.NewMethod[AddParams, Sum]("add").Describe(rpc.Doc{
		Summary:  "Adds two integers.",
		Tags:     []string{"math"},
		Errors:   []rpc.ErrorDoc{{Code: CodeOverflow, Message: "the sum is too large", Data: Limit{Max: MaxSum}}},
		Examples: []rpc.Example{{Name: "two and three", Params: AddParams{A: 2, B: 3}, Result: Sum{5}}},
	})
	RectArea = rpc.NewMethod[AreaParams, Area]("rect/area").Describe(rpc.Doc{
		Summary:     "Returns the area of a rectangle.",
		Description: "Point and Rect are named types, described once in the components and referred to.",
	})
	DoPaint = rpc.NewMethod[PaintParams, Paint]("paint").Describe(rpc.Doc{Summary: "Paints in one of three colors."})
	Now     = rpc.NewMethod[rpc.NoParams, string]("now").Describe(rpc.Doc{Summary: "Takes no params; returns a constant string."})
	Log     = rpc.NewNotification[LogEntry]("log").Describe(rpc.Doc{Summary: "Records a log entry."})
)

// Service is a registry serving the API, with the log entries it was sent.
type Service struct {
	Registry *rpc.Registry
	mu       sync.Mutex
	logs     []LogEntry
}

// New returns a service whose registry serves the API, rpc.discover
// included.
func New() *Service {
	s := &Service{Registry: rpc.NewRegistry()}
	reg := s.Registry
	rpc.Handle(reg, Add, func(_ context.Context, p AddParams) (Sum, error) {
		sum := p.A + p.B
		if sum > MaxSum || sum < -MaxSum {
			data, _ := json.Marshal(Limit{Max: MaxSum})
			return Sum{}, &rpc.Error{Code: CodeOverflow, Message: "the sum is too large", Data: data}
		}
		return Sum{sum}, nil
	})
	rpc.Handle(reg, RectArea, func(_ context.Context, p AreaParams) (Area, error) {
		w, h := p.Rect.Max.X-p.Rect.Min.X, p.Rect.Max.Y-p.Rect.Min.Y
		return Area{Area: abs(w) * abs(h), Label: p.Label}, nil
	})
	rpc.Handle(reg, DoPaint, func(_ context.Context, p PaintParams) (Paint, error) {
		return Paint{Color: p.Color, Note: strings.Join(p.Tags, ",")}, nil
	})
	rpc.Handle(reg, Now, func(context.Context, rpc.NoParams) (string, error) { return "2026-12-05T00:00:00Z", nil })
	rpc.HandleNotification(reg, Log, func(_ context.Context, e LogEntry) {
		s.mu.Lock()
		s.logs = append(s.logs, e)
		s.mu.Unlock()
	})
	if err := openrpc.HandleDiscover(reg, Info); err != nil {
		panic(err) // the API's types are all described: a change that breaks that fails every test at once
	}
	return s
}

// Logs returns the log entries the service was sent.
func (s *Service) Logs() []LogEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]LogEntry(nil), s.logs...)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
