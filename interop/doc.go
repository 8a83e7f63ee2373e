// Package interop proves wire compatibility between this module's Go
// packages (rpc, sdkproto) and the real TypeScript peers published on npm:
// @deepseek-ai/dsh-sdk-protocol (JsonRpcLineTransport) and
// @deepseek-ai/dsh-sdk-client (HarnessClient, DeepSeekHarness), both
// 0.0.1-rc.1; the Model Context Protocol SDK (@modelcontextprotocol/sdk);
// and vscode-jsonrpc, the JSON-RPC of the Language Server Protocol, which
// drives examples/lsp and is driven by rpc as a client. All are pinned in
// package.json and package-lock.json.
//
// The package holds tests only. They start small Node programs of ours
// (js/) that use the real classes, as child processes over stdio. When the
// peers are not installed the tests skip, naming `make interop-install`;
// with LINERPC_REQUIRE_PEERS=1 (which `make test` and `make interop` set)
// they fail instead. README.md lists every scenario and its result.
package interop
