// mcp_client.mjs: the real @modelcontextprotocol/sdk Client on this
// process's stdin/stdout (the SDK's stdio framing, one JSON message per
// line), driving an MCP server written with Go's rpc package.
//
//   node mcp_client.mjs
//
// It initializes, calls the tool "slow" with an AbortSignal and progress,
// aborts the call when the first progress notification arrives (the Go
// handler is then running), calls "echo" afterwards, and prints a JSON
// report on stderr: how the aborted call ended, the echo's text, and every
// error the client reported. A response to the aborted call would show
// there as "Received a response for an unknown message ID": the Go server
// runs one handler at a time, so the echo is answered after anything the
// slow call's handler could have written.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const report = { errors: [] };
const client = new Client({ name: 'linerpc-interop', version: '0.0.0' });
client.onerror = (e) => report.errors.push(String(e));

// The server side of the SDK's stdio framing is the same line codec over
// any pair of streams: here it carries the client's messages.
await client.connect(new StdioServerTransport(process.stdin, process.stdout));
report.server = client.getServerVersion();

const controller = new AbortController();
try {
  await client.callTool({ name: 'slow', arguments: { query: 'gophers' } }, undefined, {
    signal: controller.signal,
    onprogress: () => controller.abort('the user pressed stop'),
  });
  report.slow = 'resolved';
} catch (e) {
  report.slow = `rejected: ${e?.message ?? e}`;
}
const echo = await client.callTool({ name: 'echo', arguments: { text: 'after' } });
report.echo = echo.content?.[0]?.text;
await client.close();
process.stderr.write(JSON.stringify(report) + '\n', () => process.exit(0));
