// lsp_server.mjs: the real vscode-jsonrpc MessageConnection as a server on
// this process's stdin/stdout (LSP's Content-Length framing), driven by
// Go's rpc as its client.
//
//   node lsp_server.mjs
//
// Requests: "echo" answers its params; "sum" takes its params by position
// and answers their sum; "fail" throws a ResponseError with data; "slow"
// reports {"started": true} on stderr, waits until its token is cancelled
// ($/cancelRequest), reports {"cancelled": true} and answers
// RequestCancelled (-32800), as LSP servers do; "askGo" calls the client
// back ("go/double" with its params, {"x": number}) and answers what it
// got; "notes"
// answers the params of every "note" notification received, in order.
// Each "note" is answered with a "noted" notification of the same params.
// Connection errors are reported on stderr as {"error": ...}.
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  ResponseError,
  RequestType,
  NotificationType,
} from 'vscode-jsonrpc/node.js';

const say = (v) => process.stderr.write(JSON.stringify(v) + '\n');
const conn = createMessageConnection(new StreamMessageReader(process.stdin), new StreamMessageWriter(process.stdout));
conn.onError(([error]) => say({ error: String(error) }));
conn.onClose(() => process.exit(0));

const notes = [];
const Note = new NotificationType('note');
const Noted = new NotificationType('noted');
const Double = new RequestType('go/double');

conn.onRequest('echo', (params) => params);
conn.onRequest('sum', (...args) => args.slice(0, -1).reduce((a, b) => a + b, 0)); // the last is the token
conn.onRequest('fail', (params) => {
  throw new ResponseError(4242, 'vscode-jsonrpc fails as asked', { echoed: params, list: [1, 'x', null, true] });
});
// A handler's last argument is its cancellation token (without params,
// its only one).
conn.onRequest('slow', async (...args) => {
  const token = args[args.length - 1];
  say({ started: true });
  await new Promise((resolve) => {
    if (token.isCancellationRequested) resolve();
    else token.onCancellationRequested(resolve);
  });
  say({ cancelled: true });
  throw new ResponseError(-32800, 'cancelled by the client');
});
conn.onRequest('askGo', async (params) => conn.sendRequest(Double, params));
conn.onRequest('notes', () => notes);
conn.onNotification(Note, (params) => {
  notes.push(params);
  conn.sendNotification(Noted, params);
});
conn.listen();
