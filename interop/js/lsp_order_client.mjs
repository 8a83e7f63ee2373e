// lsp_order_client.mjs: the real vscode-jsonrpc client MessageConnection
// drives a language server (examples/lsp, or js/lsp_reference_server.mjs)
// through one case of lsp_order_test.go, RUNS times, PARALLEL runs at
// once, and prints what each run saw as one JSON line on stdout, for the
// Go test to compare with the reference's.
//
//   node lsp_order_client.mjs CASE RUNS PARALLEL stdio COMMAND [ARGS...]  # a server process per run
//   node lsp_order_client.mjs CASE RUNS PARALLEL unix PATH               # a connection per run
//   node lsp_order_client.mjs CASE RUNS PARALLEL tcp HOST:PORT
//
// The report: {"runs": [{"transcript": {...}, "error": "...", "stderr":
// "...", "writes": [...]}, ...], "ms": N}. A transcript holds what the
// server sent, as the client read it off the wire: the answer to each
// request of the client's, by label ({"result": ...}, {"error": {...}} or
// "unanswered" when the connection ended first), the notifications of
// each method in the order they came, the server's requests, the order of
// the answers when the case compares it, and how the server process
// ended (stdio). error says why a run stopped before its end (a wait that
// timed out, naming what it waited for); stderr is what the server wrote
// there; writes describes the writes of frames batched in one write.
//
// How the bytes leave. Messages go through vscode-jsonrpc's
// MessageConnection (sendRequest, sendNotification; it numbers the
// requests, sends $/cancelRequest, answers workspace/configuration) into
// Wire, a MessageWriter that hands each message to vscode-jsonrpc's own
// StreamMessageWriter or SocketMessageWriter (which writes the header and
// the body of each frame as two writes, a tick apart, as VS Code does),
// except between cork() and uncork(): then Wire encodes the messages
// itself as vscode-jsonrpc does ("Content-Length: N\r\n\r\n" and the
// UTF-8 JSON) and uncork() writes all their frames with ONE write() of
// one Buffer on the child's stdin or the socket. Messages are read by
// vscode-jsonrpc's StreamMessageReader or SocketMessageReader; a tap on
// the reader records each message as it is decoded, before the
// connection queues it, so that the transcript holds every answer that
// arrived before the connection closed.
import { spawn } from 'node:child_process';
import net from 'node:net';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  SocketMessageReader,
  SocketMessageWriter,
  CancellationTokenSource,
  ParameterStructures,
} from 'vscode-jsonrpc/node.js';

// WAIT_MS bounds every wait of a run; a run whose wait times out stops,
// reporting what it waited for.
const WAIT_MS = 20_000;

// within settles with p, or rejects after ms naming what it waited for.
function within(p, what, ms = WAIT_MS) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

// TapReader is a MessageReader that tells tap every message the reader
// decodes, before the connection sees it.
class TapReader {
  constructor(inner, tap) {
    this.inner = inner;
    this.tap = tap;
    this.onError = inner.onError;
    this.onClose = inner.onClose;
    this.onPartialMessage = inner.onPartialMessage;
  }
  listen(callback) {
    return this.inner.listen((msg) => {
      this.tap(msg);
      callback(msg);
    });
  }
  dispose() {
    this.inner.dispose();
  }
}

// frame encodes msg as vscode-jsonrpc's writers do.
function frame(msg) {
  const body = Buffer.from(JSON.stringify(msg), 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
}

// Wire is the connection's MessageWriter: vscode-jsonrpc's own writer,
// or, between cork() and uncork(), frames written together in one write.
class Wire {
  constructor(stream, inner, onSend) {
    this.stream = stream;
    this.inner = inner;
    this.onSend = onSend;
    this.onError = inner.onError;
    this.onClose = inner.onClose;
    this.pending = Promise.resolve(); // the last write of inner
    this.corked = null; // the frames held, and their writes' settlers
    this.batches = []; // what each uncork() wrote
  }
  write(msg) {
    this.onSend(msg);
    if (this.corked) {
      return new Promise((resolve, reject) => this.corked.push({ msg, resolve, reject }));
    }
    const p = this.inner.write(msg);
    this.pending = p.catch(() => {});
    return p;
  }
  cork() {
    this.corked = [];
  }
  // uncork writes the frames held with one write, once what vscode-jsonrpc's
  // writer had (a header, a body) has left; messages sent meanwhile join
  // the batch.
  async uncork() {
    await this.pending;
    const held = this.corked;
    this.corked = null;
    const buf = Buffer.concat(held.map((h) => frame(h.msg)));
    this.batches.push({ frames: held.map((h) => h.msg.method ?? `response ${h.msg.id}`), bytes: buf.length });
    await new Promise((resolve) => {
      this.stream.write(buf, (err) => {
        for (const h of held) (err ? h.reject(err) : h.resolve());
        resolve();
      });
    });
  }
  end() {
    this.inner.end();
  }
  dispose() {
    this.inner.dispose();
  }
}

// errorOf is an error response as the transcript keeps it. -32601's
// message is the library's own text ("Unhandled method X" in
// vscode-jsonrpc, "method not found: X" in rpc): its code is compared.
function errorOf(e) {
  const out = { code: e.code, message: e.code === -32601 ? '(the library\'s text)' : e.message };
  if (e.data !== undefined) out.data = e.data;
  return out;
}

// A Run is one connection to the server, with everything it received.
class Run {
  constructor(target) {
    this.target = target;
    this.labels = new Map(); // request id -> label
    this.sent = []; // labels, in the order sent
    this.answers = new Map(); // label -> answer
    this.order = []; // labels, in the order answered
    this.notifications = {}; // method -> params, in order
    this.serverRequests = [];
    this.unexpected = [];
    this.waiters = [];
    this.nextLabel = null;
    this.stderr = '';
    this.ended = false;
  }

  // start connects: a server process over its stdio, or a socket.
  async start() {
    const [kind, ...rest] = this.target;
    let reader, stream, inner, closed;
    if (kind === 'stdio') {
      const child = spawn(rest[0], rest.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
      this.child = child;
      child.stdin.on('error', () => {});
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (s) => (this.stderr += s));
      closed = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
      reader = new StreamMessageReader(child.stdout);
      stream = child.stdin;
      inner = new StreamMessageWriter(child.stdin);
    } else {
      const [host, port] = kind === 'tcp' ? [rest[0].slice(0, rest[0].lastIndexOf(':')), Number(rest[0].slice(rest[0].lastIndexOf(':') + 1))] : [];
      const socket = kind === 'unix' ? net.createConnection(rest[0]) : net.createConnection({ host, port });
      this.socket = socket;
      await within(new Promise((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      }), `the connection to ${rest[0]}`);
      socket.on('error', () => {});
      closed = new Promise((resolve) => socket.on('close', () => resolve(null)));
      reader = new SocketMessageReader(socket);
      stream = socket;
      inner = new SocketMessageWriter(socket);
    }
    this.closed = closed.then((exit) => {
      this.exit = exit;
      this.ended = true;
      this.wake();
    });
    this.wire = new Wire(stream, inner, (msg) => this.onSend(msg));
    this.conn = createMessageConnection(new TapReader(reader, (msg) => this.onReceive(msg)), this.wire);
    this.conn.onError(() => {}); // writes after the server left
    this.conn.onRequest('workspace/configuration', () => [{ greeting: 'hello from vscode-jsonrpc', n: 1 }]);
    this.conn.listen();
  }

  onSend(msg) {
    if (msg.method !== undefined && msg.id !== undefined) {
      const label = this.nextLabel ?? `${msg.method} ${msg.id}`;
      this.nextLabel = null;
      this.labels.set(msg.id, label);
      this.sent.push(label);
    }
  }

  onReceive(msg) {
    if (msg.method !== undefined && msg.id !== undefined) {
      this.serverRequests.push({ method: msg.method, params: msg.params ?? null });
    } else if (msg.method !== undefined) {
      (this.notifications[msg.method] ??= []).push(msg.params ?? null);
    } else {
      const label = this.labels.get(msg.id);
      if (label === undefined || this.answers.has(label)) {
        this.unexpected.push(msg);
      } else {
        this.answers.set(label, msg.error !== undefined ? { error: errorOf(msg.error) } : { result: msg.result });
        this.order.push(label);
      }
    }
    this.wake();
  }

  wake() {
    this.waiters = this.waiters.filter((w) => !w());
  }

  // until resolves once cond() holds, or the connection has ended (the
  // transcript then shows what is missing); it fails after WAIT_MS naming
  // what.
  until(cond, what) {
    if (cond() || this.ended) return Promise.resolve();
    return within(new Promise((resolve) => this.waiters.push(() => {
      if (cond() || this.ended) {
        resolve();
        return true;
      }
      return false;
    })), what);
  }

  // request sends a request labelled label, and does not await it (the
  // tap records its answer). Sending on a closed connection throws.
  request(label, method, ...args) {
    this.nextLabel = label;
    this.conn.sendRequest(method, ...args).catch(() => {});
  }

  // notify sends a notification, without params when params is undefined
  // (vscode-jsonrpc would send [null]).
  notify(method, params) {
    const p = params === undefined ? this.conn.sendNotification(method) : this.conn.sendNotification(method, params);
    p.catch(() => {});
  }

  answered(label) {
    return this.until(() => this.answers.has(label), `the answer to ${label}`);
  }

  count(method) {
    return this.notifications[method]?.length ?? 0;
  }

  // received waits for the n-th notification of method.
  received(method, n) {
    return this.until(() => this.count(method) >= n, `${method} number ${n}`);
  }

  // exitAndEnd sends exit and waits for the server to end the connection
  // (a process over stdio exits; a socket is closed).
  async exitAndEnd() {
    this.notify('exit');
    await within(this.closed, this.child ? 'the server process to exit after exit' : 'the server to close the connection after exit');
  }

  // finish ends what is left of the connection (the process killed, the
  // socket destroyed, when a run stopped early) and returns the report.
  async finish(error, keepOrder) {
    if (!this.ended) {
      if (this.child) this.child.kill('SIGKILL');
      else this.socket.destroy();
      await within(this.closed, 'the end of the connection');
    }
    this.conn.dispose();
    const t = { answers: {}, notifications: this.notifications, serverRequests: this.serverRequests };
    for (const label of this.sent) t.answers[label] = this.answers.get(label) ?? 'unanswered';
    if (keepOrder) t.order = this.order;
    if (this.unexpected.length > 0) t.unexpected = this.unexpected;
    if (this.child) t.exit = this.exit;
    const report = { transcript: t };
    if (error) report.error = String(error?.message ?? error);
    if (this.stderr) report.stderr = this.stderr.slice(0, 4000);
    if (this.wire.batches.length > 0) report.writes = this.wire.batches;
    return report;
  }
}

const hoverAt = (uri, line, character) => ({ textDocument: { uri }, position: { line, character } });
const didOpen = (uri, text, version = 1) => ({ textDocument: { uri, languageId: 'plaintext', version, text } });
const didChange = (uri, version, text) => ({ textDocument: { uri, version }, contentChanges: [{ text }] });
const initParams = (configuration) => ({
  processId: process.pid,
  clientInfo: { name: 'lsp_order_client', version: '8.2.1' },
  rootUri: null,
  capabilities: configuration ? { workspace: { configuration: true } } : {},
});

// initialize runs the handshake, initialize awaited; without the
// configuration capability, so that initialized asks nothing.
async function initialize(r) {
  r.request('initialize', 'initialize', initParams(false));
  await r.answered('initialize');
  r.notify('initialized', {});
}

async function shutdownAndExit(r) {
  r.request('shutdown', 'shutdown');
  await r.answered('shutdown');
  await r.exitAndEnd();
}

// The cases: each drives one run and returns whether the answers' order
// belongs in the transcript.
const cases = {
  // (a) Typing: a document opened, then didChange (full text) and hover,
  // ten times, all sent back to back without awaiting anything, through
  // vscode-jsonrpc's own writer. Each hover must see the change sent
  // before it.
  async typing(r) {
    await initialize(r);
    const uri = 'file:///typing.txt';
    r.notify('textDocument/didOpen', didOpen(uri, 'start TODO'));
    await r.received('textDocument/publishDiagnostics', 1);
    const n = 10;
    for (let i = 1; i <= n; i++) {
      r.notify('textDocument/didChange', didChange(uri, i + 1, `change_${i} TODO`));
      r.request(`hover ${i}`, 'textDocument/hover', hoverAt(uri, 0, 3));
    }
    for (let i = 1; i <= n; i++) await r.answered(`hover ${i}`);
    await r.received('textDocument/publishDiagnostics', n + 1);
    await shutdownAndExit(r);
  },

  // (b) A client with the configuration capability, as VS Code: once
  // initialize is answered, initialized, didOpen and hover in one write.
  // The hover must see the document; the server's
  // workspace/configuration is answered (and logged back).
  async configuration(r) {
    r.request('initialize', 'initialize', initParams(true));
    await r.answered('initialize');
    const uri = 'file:///configured.txt';
    r.wire.cork();
    r.notify('initialized', {});
    r.notify('textDocument/didOpen', didOpen(uri, 'hello configured_world TODO'));
    r.request('hover', 'textDocument/hover', hoverAt(uri, 0, 8));
    await r.wire.uncork();
    await r.answered('hover');
    await r.received('textDocument/publishDiagnostics', 1);
    await r.until(() => r.serverRequests.length >= 1, 'the workspace/configuration request');
    await r.received('window/logMessage', 1);
    await shutdownAndExit(r);
  },

  // (c) Over a socket: hover, then didChange, in one write. The hover
  // must see the text from before the change.
  async hoverThenChange(r) {
    await initialize(r);
    const uri = 'file:///socket.txt';
    r.notify('textDocument/didOpen', didOpen(uri, 'before_word TODO'));
    await r.received('textDocument/publishDiagnostics', 1);
    r.wire.cork();
    r.request('hover', 'textDocument/hover', hoverAt(uri, 0, 3));
    r.notify('textDocument/didChange', didChange(uri, 2, 'after_word'));
    await r.wire.uncork();
    await r.answered('hover');
    await r.received('textDocument/publishDiagnostics', 2);
    await shutdownAndExit(r);
  },

  // (d) shutdown while toy.wait [3000] runs (once the server logged that
  // it waits): shutdown must be answered first. Once either is answered,
  // a wait still running is cancelled ($/cancelRequest), so that a run
  // takes milliseconds when shutdown is answered first.
  async shutdownDuringWait(r) {
    await initialize(r);
    const source = new CancellationTokenSource();
    r.request('toy.wait', 'workspace/executeCommand', { command: 'toy.wait', arguments: [3000] }, source.token);
    await r.received('window/logMessage', 1);
    r.request('shutdown', 'shutdown');
    await r.until(() => r.answers.has('shutdown') || r.answers.has('toy.wait'), 'the first answer, to shutdown or toy.wait');
    if (!r.answers.has('toy.wait')) source.cancel();
    await r.answered('shutdown');
    await r.answered('toy.wait');
    await r.exitAndEnd();
    return true;
  },

  // toy.wait [3000] and its $/cancelRequest in one write: the request is
  // cancelled before its handler starts. Not a case of the Go test: run
  // by hand, it shows that vscode-jsonrpc still runs such a request's
  // handler, its token already cancelled (interop/README.md).
  async cancelInOneWrite(r) {
    await initialize(r);
    const source = new CancellationTokenSource();
    r.wire.cork();
    r.request('toy.wait', 'workspace/executeCommand', { command: 'toy.wait', arguments: [3000] }, source.token);
    source.cancel();
    await r.wire.uncork();
    await r.answered('toy.wait');
    await shutdownAndExit(r);
  },

  // (e) A whole session in one write: initialize, initialized, didOpen,
  // hover, didChange, hover, shutdown, exit. Every request must be
  // answered, and the server exit 0.
  async wholeSession(r) {
    const uri = 'file:///session.txt';
    r.wire.cork();
    r.request('initialize', 'initialize', initParams(false));
    r.notify('initialized', {});
    r.notify('textDocument/didOpen', didOpen(uri, 'first_word TODO'));
    r.request('hover 1', 'textDocument/hover', hoverAt(uri, 0, 2));
    r.notify('textDocument/didChange', didChange(uri, 2, 'second_word'));
    r.request('hover 2', 'textDocument/hover', hoverAt(uri, 0, 2));
    r.request('shutdown', 'shutdown');
    r.notify('exit');
    await r.wire.uncork();
    await within(r.closed, 'the server process to exit');
  },

  // The document model and every handler, one step at a time: the
  // answers of examples/lsp and of the reference must be the same.
  async model(r) {
    await model(r);
  },

  // exit without shutdown: status 1.
  async exitWithoutShutdown(r) {
    await initialize(r);
    await r.exitAndEnd();
  },

  // The client closes the server's stdin, after shutdown and without.
  async inputEnds(r) {
    await initialize(r);
    r.request('shutdown', 'shutdown');
    await r.answered('shutdown');
    r.child.stdin.end();
    await within(r.closed, 'the server process to exit after its input ended');
  },
  async inputEndsWithoutShutdown(r) {
    await initialize(r);
    r.request('add', 'toy/add', ParameterStructures.byPosition, 1, 2);
    await r.answered('add');
    r.child.stdin.end();
    await within(r.closed, 'the server process to exit after its input ended');
  },
};

// Texts for the document model: UTF-16 surrogate pairs, combining marks,
// letters and digits of other scripts, line breaks of every kind, TODOs
// next to each other and across lines, a lone surrogate.
const modelTexts = [
  'a😀b\nxy\r\nq\ré𝄞z',
  '  𝄞héllo_2, wörld\r\n\tx',
  'TODO😀TODO\nnone\r\n é TODOTODO',
  'Ünïcode 😀 héllo_wörld TODO\r\nsecond line: 𝄞x_1 TODOTODO\nthird\r',
  '',
  '\r\n\r\r\n\n',
  '日本語テキスト TODO ٣٤٥ digits_١٢ ǅungla ʰmod ²sup Ⅻroman',
  'x\u200dy 🚀launch_day TODOs TODOTODOTODO\n\n',
  'TOD\nO TODO\r\nTODO',
  'e\u0301cole ﬁx ＴＯＤＯ 𝔘𝔫𝔦 𝟘𝟙',
  'a\ud800b \udc00c_d',
];

// hoverAll hovers every position of d (from one before each line and
// character to two beyond), as requests sent at once.
async function hoverAll(r, uri, text, tag) {
  const lines = text.split(/\r\n|\r|\n/);
  const labels = [];
  for (let line = -1; line <= lines.length; line++) {
    const len = lines[line]?.length ?? 0;
    for (let ch = -1; ch <= len + 2; ch++) {
      const label = `${tag} hover ${line}:${ch}`;
      r.request(label, 'textDocument/hover', hoverAt(uri, line, ch));
      labels.push(label);
    }
  }
  for (const label of labels) await r.answered(label);
}

async function model(r) {
  const diags = 'textDocument/publishDiagnostics';
  const logs = 'window/logMessage';
  let nd = 0; // diagnostics received so far
  let nl = 0; // logs
  const step = async (label, method, ...args) => {
    r.request(label, method, ...args);
    await r.answered(label);
  };

  // Before initialize: requests refused, notifications dropped, an
  // unknown method not found.
  await step('hover before initialize', 'textDocument/hover', hoverAt('file:///early.txt', 0, 0));
  r.notify('textDocument/didOpen', didOpen('file:///early.txt', 'early TODO'));
  r.notify('initialized', {});
  await step('add before initialize', 'toy/add', ParameterStructures.byPosition, 1, 2);
  await step('unknown before initialize', 'toy/nothing', {});
  await step('shutdown before initialize', 'shutdown');

  await step('initialize', 'initialize', initParams(true));
  await step('initialize again', 'initialize', initParams(false));
  r.notify('initialized', {});
  await r.until(() => r.serverRequests.length >= 1, 'the workspace/configuration request');
  await r.received(logs, ++nl);
  r.notify('initialized', {}); // asks nothing more
  await step('hover of the document dropped', 'textDocument/hover', hoverAt('file:///early.txt', 0, 1));

  for (const [i, text] of modelTexts.entries()) {
    const uri = `file:///model/${i}.txt`;
    r.notify('textDocument/didOpen', didOpen(uri, text, 7));
    await r.received(diags, ++nd);
    await hoverAll(r, uri, text, `text ${i}`);
  }

  // Ranged changes, several in one didChange: a range reversed, one
  // inside a surrogate pair, beyond a line's end and the last line,
  // negative, one inserting line breaks; then a full change among ranged
  // ones.
  const uri = 'file:///model/3.txt';
  const ranged = (sl, sc, el, ec, text) => ({ range: { start: { line: sl, character: sc }, end: { line: el, character: ec } }, text });
  const steps = [
    [ranged(0, 0, 0, 7, 'Unicode')],
    [ranged(1, 5, 1, 2, 'Z'), ranged(0, 9, 0, 9, '!'), ranged(0, 10, 0, 9, '?')],
    [ranged(2, 99, 9, 0, ' END TODO'), ranged(-1, 3, 0, 2, 'neg_')],
    [ranged(1, 0, 1, 0, 'new\r\nlines\rhere TODO\n')],
    [{ text: 'replaced 😀 all TODO' }, ranged(0, 3, 0, 5, '𝄞𝄞')],
    [],
  ];
  for (const [i, changes] of steps.entries()) {
    r.notify('textDocument/didChange', { textDocument: { uri, version: 8 + i }, contentChanges: changes });
    await r.received(diags, ++nd);
    await step(`hover after change ${i}`, 'textDocument/hover', hoverAt(uri, 0, 2));
  }
  // The client does not compute the text after the ranged changes: it
  // hovers an area wider than the text.
  await hoverAll(r, uri, Array.from({ length: 8 }, () => 'x'.repeat(30)).join('\n'), 'after changes');

  // didChange of a document not open logs an error; didClose clears the
  // diagnostics (also of a document not open), and hover is then null.
  r.notify('textDocument/didChange', didChange('file:///not-open.txt', 2, 'x'));
  await r.received(logs, ++nl);
  r.notify('textDocument/didClose', { textDocument: { uri } });
  await r.received(diags, ++nd);
  await step('hover after didClose', 'textDocument/hover', hoverAt(uri, 0, 1));
  r.notify('textDocument/didClose', { textDocument: { uri: 'file:///never-open.txt' } });
  await r.received(diags, ++nd);
  r.notify('textDocument/didOpen', { textDocument: { uri: 'file:///no-version.txt', languageId: 'plaintext', text: 'TODO' } });
  await r.received(diags, ++nd);

  // toy/add, toy/fail, unknown methods.
  await step('add', 'toy/add', ParameterStructures.byPosition, 1, 2, 3.5);
  await step('add nothing', 'toy/add', ParameterStructures.byPosition);
  await step('add one', 'toy/add', ParameterStructures.byPosition, 41);
  await step('fail', 'toy/fail', { why: 'model', list: [1, 'x', null, true] });
  await step('fail without params', 'toy/fail');
  await step('unknown', 'toy/nothing', {});

  // workspace/executeCommand: refusals, waits, the log's number format,
  // and waits cancelled once they log.
  const command = (label, cmd, args) => step(label, 'workspace/executeCommand', args === undefined ? { command: cmd } : { command: cmd, arguments: args });
  await command('unknown command', 'toy.nope', [1]);
  await command('no command', undefined, [1]);
  await command('wait without arguments', 'toy.wait');
  await command('wait with two', 'toy.wait', [1, 2]);
  await command('wait a string', 'toy.wait', ['5']);
  await command('wait negative', 'toy.wait', [-1]);
  for (const ms of [null, 0, 1, 1.5, 0.00001, 12.25]) {
    await command(`wait ${ms}`, 'toy.wait', [ms]);
    await r.received(logs, ++nl);
  }
  for (const ms of [123456.7, 1_000_000, 2.5e9]) {
    const source = new CancellationTokenSource();
    r.request(`wait ${ms} cancelled`, 'workspace/executeCommand', { command: 'toy.wait', arguments: [ms] }, source.token);
    await r.received(logs, ++nl);
    source.cancel();
    await r.answered(`wait ${ms} cancelled`);
  }

  // Shutdown: everything but exit is refused or dropped.
  await step('shutdown', 'shutdown');
  await step('hover after shutdown', 'textDocument/hover', hoverAt('file:///model/0.txt', 0, 0));
  await step('initialize after shutdown', 'initialize', initParams(false));
  await step('unknown after shutdown', 'toy/nothing', {});
  r.notify('textDocument/didOpen', didOpen('file:///late.txt', 'late TODO'));
  await step('shutdown again', 'shutdown');
  await r.exitAndEnd();
}

const [name, runsArg, parallelArg, ...target] = process.argv.slice(2);
const run = cases[name];
const runs = Number(runsArg);
const parallel = Number(parallelArg);
if (!run || !(runs > 0) || !(parallel > 0) || !['stdio', 'unix', 'tcp'].includes(target[0]) || target.length < 2) {
  console.error(`usage: node lsp_order_client.mjs (${Object.keys(cases).join('|')}) RUNS PARALLEL (stdio COMMAND [ARGS...] | unix PATH | tcp HOST:PORT)`);
  process.exit(2);
}

// once runs the case once, on a connection of its own.
async function once() {
  const r = new Run(target);
  let error = null;
  let keepOrder = false;
  try {
    await r.start();
    keepOrder = (await run(r)) === true;
  } catch (e) {
    error = e;
  }
  try {
    return await r.finish(error, keepOrder);
  } catch (e) {
    return { error: `${error ? error.message + '; then ' : ''}${e.message}` };
  }
}

const t0 = Date.now();
const reports = new Array(runs);
let next = 0;
await Promise.all(Array.from({ length: Math.min(parallel, runs) }, async () => {
  while (next < runs) {
    const i = next++;
    reports[i] = await once();
  }
}));
// The report can be larger than a pipe holds: exit once it is written.
process.stdout.write(JSON.stringify({ runs: reports, ms: Date.now() - t0 }) + '\n', () => process.exit(0));
