module github.com/linerpc/linerpc/bench

go 1.26.0

require (
	github.com/creachadair/jrpc2 v1.3.6
	github.com/goccy/go-json v0.12.0
	github.com/linerpc/linerpc v0.0.0
	github.com/sourcegraph/jsonrpc2 v0.2.3
	go.lsp.dev/jsonrpc2 v1.0.1
	golang.org/x/exp/jsonrpc2 v0.0.0-20260709172345-9ea1abe57597
)

require (
	github.com/creachadair/mds v0.31.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260601182631-00ed12fed2a6 // indirect
	golang.org/x/exp/event v0.0.0-20260611194520-c48552f49976 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/xerrors v0.0.0-20240903120638-7835f813f4da // indirect
)

replace github.com/linerpc/linerpc => ../
