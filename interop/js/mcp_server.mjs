// mcp_server.mjs: the real @modelcontextprotocol/sdk Server on this
// process's stdin/stdout, with two tools, driven by Go's rpc package as
// an MCP client.
//
//   node mcp_server.mjs
//
// "slow" reports on stderr that it started ({"started": requestId}), waits
// until its AbortSignal fires, reports {"aborted": requestId, "reason": …},
// and then resolves anyway (the SDK sends no response for a cancelled
// request). "echo" answers its text.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const say = (v) => process.stderr.write(JSON.stringify(v) + '\n');
const server = new Server({ name: 'ts-interop-server', version: '0.0.0' }, { capabilities: { tools: {} } });
server.onerror = (e) => say({ error: String(e) });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: 'slow', inputSchema: { type: 'object' } },
    { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const { name, arguments: args } = request.params;
  if (name === 'echo') return { content: [{ type: 'text', text: String(args?.text) }] };
  say({ started: extra.requestId });
  await new Promise((resolve) => {
    if (extra.signal.aborted) resolve();
    else extra.signal.addEventListener('abort', resolve, { once: true });
  });
  say({ aborted: extra.requestId, reason: String(extra.signal.reason) });
  return { content: [{ type: 'text', text: 'too late' }] };
});
await server.connect(new StdioServerTransport());
