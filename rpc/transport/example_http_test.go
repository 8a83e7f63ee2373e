package transport_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

// An HTTPHandler serves a Registry over HTTP POST, and a Conn of
// DialHTTP's calls it with the typed Method, as over any stream. Any HTTP
// client may POST to it: a batch gets the array of its answers, a
// notification 204.
func ExampleNewHTTPHandler() {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Add, func(ctx context.Context, p AddParams) (AddResult, error) {
		return AddResult{Sum: p.A + p.B}, nil
	})
	rpc.HandleNotification(reg, greeting, func(ctx context.Context, text string) {})
	srv := httptest.NewServer(transport.NewHTTPHandler(&rpc.Options{Handler: reg}))
	defer srv.Close()

	conn, err := transport.DialHTTP(srv.URL, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	res, err := Add.Call(context.Background(), conn, AddParams{A: 2, B: 3})
	fmt.Println(res.Sum, err)

	for _, body := range []string{
		`[{"jsonrpc":"2.0","id":1,"method":"math/add","params":{"A":1,"B":1}},{"jsonrpc":"2.0","method":"greeting","params":"hi"}]`,
		`{"jsonrpc":"2.0","method":"greeting","params":"hello"}`,
		`{"jsonrpc":"2.0","id":1,"method":"math/add"`,
	} {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(strings.TrimSpace(resp.Status + " " + string(answer)))
	}
	// Output:
	// 5 <nil>
	// 200 OK [{"jsonrpc":"2.0","id":1,"result":{"Sum":2}}]
	// 204 No Content
	// 200 OK {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON at offset 43: unexpected end of input"}}
}

// A POST that brings no answer ends its call with an *rpc.Error of
// CodeHTTPError, whose Data holds the status.
func ExampleDialHTTP() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	defer srv.Close()

	conn, err := transport.DialHTTP(srv.URL, &transport.HTTPClientOptions{
		Header: http.Header{"Authorization": {"Bearer t0ken"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	_, err = Add.Call(context.Background(), conn, AddParams{A: 2, B: 3})
	var e *rpc.Error
	if errors.As(err, &e) && e.Code == transport.CodeHTTPError {
		fmt.Println(e.Message, string(e.Data))
	}
	// Output:
	// http: 503 Service Unavailable {"status":503}
}
