// lsp_client.mjs: the real vscode-jsonrpc MessageConnection as the client
// of examples/lsp (a language server written with Go's rpc), driven by the
// Go interop tests.
//
//   node lsp_client.mjs SCENARIO stdio:BINARY   # spawns the server, over its stdio
//   node lsp_client.mjs SCENARIO unix:PATH      # connects to a server's -listen socket
//   node lsp_client.mjs SCENARIO tcp:HOST:PORT
//
// Each scenario checks what it sees with node:assert and prints a one-line
// JSON report on stdout, which the Go test checks too. On a failure it
// prints "FAIL: ..." and the stack on stderr and exits 1. Every wait is
// bounded (WAIT_MS) and fails naming what it waited for. Messages arrive
// with LSP's Content-Length framing (vscode-jsonrpc's StreamMessageReader
// and SocketMessageReader), which the server detects.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  SocketMessageReader,
  SocketMessageWriter,
  CancellationTokenSource,
  ResponseError,
  ParameterStructures,
  RequestType,
  NotificationType,
} from 'vscode-jsonrpc/node.js';

const WAIT_MS = 60_000;
const RequestCancelled = -32800;
const InvalidRequest = -32600;

const [scenario, target] = process.argv.slice(2);

// within settles with p, or fails after WAIT_MS naming what it waited for.
function within(p, what, ms = WAIT_MS) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

// rejection returns the error p rejects with, and fails if it resolves.
async function rejection(p, what) {
  try {
    const v = await within(p, what);
    assert.fail(`${what}: resolved with ${JSON.stringify(v)}, want a rejection`);
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    return e;
  }
}

// A queue of the notifications of one method, to be awaited in order.
class Inbox {
  constructor(name) {
    this.name = name;
    this.items = [];
    this.waiters = [];
  }
  push(v) {
    const w = this.waiters.shift();
    if (w) w(v);
    else this.items.push(v);
  }
  next(what = this.name) {
    if (this.items.length > 0) return Promise.resolve(this.items.shift());
    return within(new Promise((resolve) => this.waiters.push(resolve)), what);
  }
}

// The typed messages, as vscode-languageserver declares them.
const Initialize = new RequestType('initialize');
const Shutdown = new RequestType('shutdown');
const Hover = new RequestType('textDocument/hover');
const ExecuteCommand = new RequestType('workspace/executeCommand');
const Initialized = new NotificationType('initialized');
const Exit = new NotificationType('exit');
const DidOpen = new NotificationType('textDocument/didOpen');
const DidChange = new NotificationType('textDocument/didChange');
const DidClose = new NotificationType('textDocument/didClose');
const PublishDiagnostics = new NotificationType('textDocument/publishDiagnostics');
const LogMessage = new NotificationType('window/logMessage');
const Configuration = new RequestType('workspace/configuration');

// connect returns a started client connection to target, with the
// server's notifications queued, workspace/configuration answered, and
// errors, closes and the child's exit recorded.
async function connect(where = target) {
  const c = {
    diags: new Inbox('textDocument/publishDiagnostics'),
    logs: new Inbox('window/logMessage'),
    configAsked: new Inbox('workspace/configuration'),
    errors: [],
    closed: null,
    exited: null,
    child: null,
    socket: null,
  };
  let reader, writer;
  const [kind, ...rest] = where.split(':');
  const address = rest.join(':');
  if (kind === 'stdio') {
    const child = spawn(address, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    c.child = child;
    c.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    reader = new StreamMessageReader(child.stdout);
    writer = new StreamMessageWriter(child.stdin);
  } else {
    const socket = kind === 'unix' ? net.createConnection(address) : net.createConnection({ host: address.slice(0, address.lastIndexOf(':')), port: Number(address.slice(address.lastIndexOf(':') + 1)) });
    await within(new Promise((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    }), `the connection to ${where}`);
    c.socket = socket;
    reader = new SocketMessageReader(socket);
    writer = new SocketMessageWriter(socket);
  }
  const conn = createMessageConnection(reader, writer);
  c.conn = conn;
  c.closed = new Promise((resolve) => conn.onClose(resolve));
  conn.onError(([error]) => c.errors.push(String(error)));
  conn.onNotification(PublishDiagnostics, (p) => c.diags.push(p));
  conn.onNotification(LogMessage, (p) => c.logs.push(p));
  conn.onRequest(Configuration, (p) => {
    c.configAsked.push(p);
    return [{ greeting: 'hello from vscode-jsonrpc', where }];
  });
  conn.listen();
  return c;
}

// initialize runs the handshake: initialize, then initialized, after
// which the server asks for the configuration (a request of the server's,
// answered by the handler above) and logs what it got.
async function initialize(c) {
  const res = await within(c.conn.sendRequest(Initialize, {
    processId: process.pid,
    clientInfo: { name: 'vscode-jsonrpc interop', version: '8.2.1' },
    rootUri: null,
    capabilities: { workspace: { configuration: true } },
  }), 'the initialize result');
  assert.deepEqual(res, {
    capabilities: { textDocumentSync: 1, hoverProvider: true, executeCommandProvider: { commands: ['toy.wait'] } },
    serverInfo: { name: 'toy-lsp', version: '0.1.0' },
  });
  await c.conn.sendNotification(Initialized, {});
  assert.deepEqual(await c.configAsked.next(), { items: [{ section: 'toy' }] });
  const log = await c.logs.next('the log of the configuration');
  assert.equal(log.message, `configuration toy: ${JSON.stringify({ greeting: 'hello from vscode-jsonrpc', where: target })}`);
  return res;
}

// expectedTodos computes, from JavaScript's own UTF-16 string indices,
// the ranges the server must report for text.
function expectedTodos(text) {
  const out = [];
  text.split(/\r\n|\r|\n/).forEach((line, n) => {
    for (let i = line.indexOf('TODO'); i >= 0; i = line.indexOf('TODO', i + 4)) {
      out.push({ start: { line: n, character: i }, end: { line: n, character: i + 4 } });
    }
  });
  return out;
}

function checkDiagnostics(d, uri, version, text) {
  assert.equal(d.uri, uri);
  assert.equal(d.version, version);
  assert.deepEqual(d.diagnostics.map((x) => x.range), expectedTodos(text));
  for (const x of d.diagnostics) {
    assert.equal(x.severity, 2);
    assert.equal(x.source, 'toy-lsp');
  }
}

// open opens a document and waits for its diagnostics, which the server
// publishes once it has the text.
async function open(c, uri, text, version = 1) {
  await c.conn.sendNotification(DidOpen, { textDocument: { uri, languageId: 'plaintext', version, text } });
  const d = await c.diags.next(`the diagnostics of ${uri}`);
  checkDiagnostics(d, uri, version, text);
  return d;
}

function hover(c, uri, line, character) {
  return within(c.conn.sendRequest(Hover, { textDocument: { uri }, position: { line, character } }), `hover at ${line}:${character}`);
}

// wordRange is where word is in text's line n, in UTF-16 code units.
function wordRange(text, n, word) {
  const line = text.split(/\r\n|\r|\n/)[n];
  const i = line.indexOf(word);
  assert.ok(i >= 0, `${word} is not on line ${n}`);
  return { start: { line: n, character: i }, end: { line: n, character: i + word.length } };
}

async function shutdownAndExit(c) {
  assert.equal(await within(c.conn.sendRequest(Shutdown), 'the shutdown result'), null);
  const after = await rejection(c.conn.sendRequest(Hover, { textDocument: { uri: 'file:///x' }, position: { line: 0, character: 0 } }), 'a request after shutdown');
  assert.ok(after instanceof ResponseError, `after shutdown: ${after}`);
  assert.equal(after.code, InvalidRequest);
  await c.conn.sendNotification(Exit);
  await within(c.closed, 'onClose after exit');
  return { afterShutdown: { code: after.code, message: after.message } };
}

const scenarios = {
  // Every behaviour of the server, in one session.
  async session() {
    const c = await connect();
    const report = {};
    report.initialize = await initialize(c);

    const uri = 'file:///project/notes.txt';
    const text = 'Ünïcode 😀 héllo_wörld TODO\r\nsecond line: 𝄞x_1 TODOTODO\nthird\r';
    report.diagnostics = (await open(c, uri, text)).diagnostics.length;

    // Positions are UTF-16 code units: JavaScript's string indices.
    const word = 'héllo_wörld';
    const where = wordRange(text, 0, word);
    const h = await hover(c, uri, 0, where.start.character + 3);
    assert.deepEqual(h, { contents: { kind: 'markdown', value: `**${word}**` }, range: where });
    report.hover = h;
    // x_1 comes right after 𝄞, a surrogate pair in UTF-16.
    const h2 = await hover(c, uri, 1, wordRange(text, 1, 'x_1').end.character);
    assert.deepEqual(h2?.range, wordRange(text, 1, 'x_1'));
    // Off a word (the space after the emoji), and inside the emoji's pair.
    assert.equal(await hover(c, uri, 0, text.indexOf('😀') + 2), null);
    assert.equal(await hover(c, uri, 0, text.indexOf('😀') + 1), null);

    // A hover written right after didChange, without waiting for
    // anything, sees the new text: the server handles a request after the
    // notifications written before it, as vscode-jsonrpc servers do.
    const changed = 'all done\nno TODO left? TODO';
    c.conn.sendNotification(DidChange, { textDocument: { uri, version: 2 }, contentChanges: [{ text: changed }] });
    const afterChange = hover(c, uri, 0, 5);
    assert.equal((await afterChange)?.contents.value, '**done**', 'a hover right after didChange');
    checkDiagnostics(await c.diags.next('the diagnostics after didChange'), uri, 2, changed);
    await c.conn.sendNotification(DidClose, { textDocument: { uri } });
    const cleared = await c.diags.next('the diagnostics cleared by didClose');
    assert.deepEqual(cleared, { uri, diagnostics: [] });
    assert.equal(await hover(c, uri, 0, 5), null);

    // Params by position: an array.
    report.add = await within(c.conn.sendRequest('toy/add', ParameterStructures.byPosition, 1, 2, 3.5), 'toy/add');
    assert.equal(report.add, 6.5);
    // An error with data.
    const e = await rejection(c.conn.sendRequest('toy/fail', { why: 'interop' }), 'toy/fail');
    assert.ok(e instanceof ResponseError, `toy/fail: ${e}`);
    assert.equal(e.code, 4001);
    assert.equal(e.message, 'toy/fail failed as asked');
    assert.deepEqual(e.data, { params: { why: 'interop' }, hint: 'toy/fail fails on purpose' });
    report.fail = { code: e.code, message: e.message, data: e.data };
    // Method not found, as LSP asks for an unknown request.
    const nf = await rejection(c.conn.sendRequest('toy/nothing', {}), 'toy/nothing');
    assert.equal(nf.code, -32601);

    assert.equal(await within(c.conn.sendRequest(ExecuteCommand, { command: 'toy.wait', arguments: [1] }), 'toy.wait [1]'), null);
    assert.equal((await c.logs.next()).message, 'toy.wait: waiting 1 ms');

    Object.assign(report, await shutdownAndExit(c));
    if (c.exited) report.exit = await within(c.exited, 'the server process to exit');
    report.errors = c.errors;
    assert.deepEqual(c.errors, []);
    return report;
  },

  // exit without shutdown: the server exits with status 1.
  async exitWithoutShutdown() {
    const c = await connect();
    await initialize(c);
    await c.conn.sendNotification(Exit);
    await within(c.closed, 'onClose after exit');
    return { exit: await within(c.exited, 'the server process to exit') };
  },

  // An 8 MiB document (more in UTF-8 than in UTF-16), then hover in it.
  async large() {
    const c = await connect();
    await initialize(c);
    const parts = [];
    let bytes = 0;
    for (let n = 0; bytes < 8 << 20; n++) {
      const line = n % 1000 === 999 ? `line ${n}: αβγ 😀 wörd_${n} TODO` : `line ${n}: αβγ 😀 wörd_${n} ✓✓✓ lorem ipsum dolor`;
      parts.push(line);
      bytes += Buffer.byteLength(line) + 1;
    }
    parts.push('the_end 😀😀 final_wörd');
    const text = parts.join('\n');
    const uri = 'file:///large.txt';
    const t0 = Date.now();
    const d = await open(c, uri, text);
    const last = parts.length - 1;
    const where = wordRange(text, last, 'final_wörd');
    const h = await hover(c, uri, last, where.start.character + 1);
    assert.deepEqual(h, { contents: { kind: 'markdown', value: '**final_wörd**' }, range: where });
    const mid = Math.floor(last / 2);
    const h2 = await hover(c, uri, mid, wordRange(text, mid, `wörd_${mid}`).start.character);
    assert.equal(h2?.contents.value, `**wörd_${mid}**`);
    const report = { bytes: Buffer.byteLength(text), lines: parts.length, diagnostics: d.diagnostics.length, hover: h, ms: Date.now() - t0 };
    await shutdownAndExit(c);
    report.exit = await within(c.exited, 'the server process to exit');
    assert.deepEqual(c.errors, []);
    return report;
  },

  // 10,000 requests written at once, none awaited before the next: every
  // one answered, each with its own result (the ids matched).
  async pipelined() {
    const c = await connect();
    await initialize(c);
    const n = 10_000;
    const t0 = Date.now();
    const results = await within(Promise.all(Array.from({ length: n }, (_, i) => c.conn.sendRequest('toy/add', ParameterStructures.byPosition, i, 0.5))), `${n} pipelined results`);
    const wrong = results.map((r, i) => [i, r]).filter(([i, r]) => r !== i + 0.5);
    assert.deepEqual(wrong.slice(0, 5), [], `${wrong.length} results do not match their requests`);
    const report = { answered: results.length, ms: Date.now() - t0 };
    await shutdownAndExit(c);
    report.exit = await within(c.exited, 'the server process to exit');
    assert.deepEqual(c.errors, []);
    return report;
  },

  // toy.wait for a minute, cancelled through a CancellationTokenSource
  // once the server said it waits: $/cancelRequest, answered -32800.
  async cancel() {
    const c = await connect();
    await initialize(c);
    const source = new CancellationTokenSource();
    const t0 = Date.now();
    const waiting = c.conn.sendRequest(ExecuteCommand, { command: 'toy.wait', arguments: [WAIT_MS * 10] }, source.token);
    assert.equal((await c.logs.next('the log of toy.wait')).message, `toy.wait: waiting ${WAIT_MS * 10} ms`);
    source.cancel();
    const e = await rejection(waiting, 'the answer to the cancelled toy.wait');
    assert.ok(e instanceof ResponseError, `the cancelled toy.wait: ${e}`);
    assert.equal(e.code, RequestCancelled);
    const report = { cancelled: { code: e.code, message: e.message }, ms: Date.now() - t0 };
    // The connection goes on.
    assert.equal(await within(c.conn.sendRequest(ExecuteCommand, { command: 'toy.wait', arguments: [0] }, new CancellationTokenSource().token), 'toy.wait [0]'), null);
    await shutdownAndExit(c);
    report.exit = await within(c.exited, 'the server process to exit');
    assert.deepEqual(c.errors, []);
    return report;
  },

  // The client ends the connection (dispose, then the end of the
  // server's stdin) with a request running: the server exits by itself,
  // with status 1, as no shutdown came.
  async clientCloses() {
    const c = await connect();
    await initialize(c);
    const pending = c.conn.sendRequest(ExecuteCommand, { command: 'toy.wait', arguments: [WAIT_MS * 10] });
    pending.catch(() => {});
    await c.logs.next('the log of toy.wait');
    c.conn.dispose();
    c.child.stdin.end();
    return { exit: await within(c.exited, 'the server process to exit after its stdin ended') };
  },

  // The server process ends (exit after shutdown), the client did
  // nothing: onClose fires, and the connection refuses new requests.
  async serverExits() {
    const c = await connect();
    await initialize(c);
    await within(c.conn.sendRequest(Shutdown), 'the shutdown result');
    await c.conn.sendNotification(Exit);
    const exit = await within(c.exited, 'the server process to exit');
    await within(c.closed, 'onClose after the server exited');
    let after;
    try {
      await c.conn.sendRequest(Hover, {});
      after = 'sent';
    } catch (e) {
      after = String(e);
    }
    assert.match(after, /closed|disposed/i);
    return { exit, closed: true, after };
  },

  // Two clients of one -listen server at once: documents are per
  // connection, and exit ends one connection only.
  async twoClients() {
    const a = await connect();
    const b = await connect();
    await initialize(a);
    await initialize(b);
    await open(a, 'file:///a.txt', 'alpha TODO');
    await open(b, 'file:///b.txt', 'beta');
    assert.equal((await hover(a, 'file:///a.txt', 0, 1))?.contents.value, '**alpha**');
    assert.equal(await hover(b, 'file:///a.txt', 0, 1), null);
    assert.equal(await hover(a, 'file:///b.txt', 0, 1), null);
    const report = {};
    Object.assign(report, await shutdownAndExit(a)); // a's onClose: the server closed a's socket
    // b goes on.
    assert.equal((await hover(b, 'file:///b.txt', 0, 1))?.contents.value, '**beta**');
    assert.equal(await within(b.conn.sendRequest('toy/add', ParameterStructures.byPosition, 20, 22), 'toy/add on b'), 42);
    await shutdownAndExit(b);
    assert.deepEqual(a.errors, []);
    assert.deepEqual(b.errors, []);
    report.ok = true;
    return report;
  },
};

const run = scenarios[scenario];
if (!run || !target) {
  console.error(`usage: node lsp_client.mjs (${Object.keys(scenarios).join('|')}) (stdio:BINARY|unix:PATH|tcp:HOST:PORT)`);
  process.exit(2);
}
try {
  const report = await run();
  process.stdout.write(JSON.stringify(report) + '\n');
  process.exit(0);
} catch (e) {
  process.stderr.write(`FAIL: ${scenario} ${target}: ${e?.stack ?? e}\n`);
  process.exit(1);
}
