// lsp_reference_server.mjs: examples/lsp written as a JavaScript language
// server would write it, on the real vscode-jsonrpc server
// MessageConnection. It is the reference the interop tests judge
// examples/lsp by (lsp_order_test.go): the same handlers, the same
// results, notifications and refusals, with vscode-jsonrpc deciding when
// each handler runs.
//
//   node lsp_reference_server.mjs                          # one client on stdin/stdout
//   node lsp_reference_server.mjs -listen tcp:127.0.0.1:0  # every client of a listener
//   node lsp_reference_server.mjs -listen unix:PATH
//
// As examples/lsp (examples/lsp/server.go, document.go):
//   - initialize answers the capabilities (full text sync, hover,
//     executeCommand toy.wait) and serverInfo toy-lsp 0.1.0, and notes
//     whether the client can answer workspace/configuration;
//   - initialized, when the client said it can, asks it for the "toy"
//     section once (awaiting the answer, as an async handler does) and logs
//     what it got with window/logMessage;
//   - didOpen, didChange (full text, or ranges) and didClose keep the
//     documents of the connection; each publishes the TODO warnings of the
//     new text (didClose clears them); didChange of a document not open
//     logs an error;
//   - hover answers the word under the position (UTF-16 positions), or
//     null off a word and in a document not open;
//   - workspace/executeCommand toy.wait [ms] logs that it waits, then
//     awaits sleep(ms); its cancellation token ($/cancelRequest) ends the
//     wait, answered RequestCancelled (-32800);
//   - toy/add answers the sum of its params (by position); toy/fail fails
//     with code 4001 and data echoing its params;
//   - the life cycle: before initialize, requests are refused -32002 and
//     notifications dropped; a second initialize is refused -32600; after
//     shutdown, everything but exit is refused -32600 (requests) or dropped
//     (notifications); exit ends the process with status 0 after shutdown
//     and 1 without (on stdio), or that client's connection (-listen); the
//     end of the input ends the process the same way, once the requests
//     running have answered (at most 2 s).
// vscode-jsonrpc itself answers what no handler takes (-32601 "Unhandled
// method", in any phase, as rpc's read loop does) and handles
// $/cancelRequest.
//
// Differences that are the library's, not the server's: words are letters
// (\p{L}), decimal digits (\p{Nd}) and "_" in the Unicode version of
// Node's ICU, where Go's unicode package has its own (letters assigned in
// between differ); a JSON string with a lone surrogate is kept as such
// here and decoded to U+FFFD by Go (one UTF-16 code unit either way); and
// params that do not have the expected types are not refused -32602 here.
import net from 'node:net';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  SocketMessageReader,
  SocketMessageWriter,
  ResponseError,
} from 'vscode-jsonrpc/node.js';

const serverName = 'toy-lsp';
const serverVersion = '0.1.0';
const cmdWait = 'toy.wait';
const grace = 2000; // ms, as examples/lsp's grace
const configTimeout = 10_000; // ms, as examples/lsp's configTimeout

const ServerNotInitialized = -32002;
const InvalidRequest = -32600;
const InvalidParams = -32602;
const RequestCancelled = -32800;
const ToyFailure = 4001;

const SeverityWarning = 2;
const MessageError = 1;
const MessageInfo = 3;
const MessageLog = 4;

// ---- The document model, as examples/lsp/document.go. JavaScript
// strings are UTF-16, so a position's character is a string index; a
// position inside a surrogate pair means the start of its character.

const isHigh = (c) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c) => c >= 0xdc00 && c <= 0xdfff;
const wordChar = /^[_\p{L}\p{Nd}]$/u;

class Document {
  constructor(text, version) {
    this.text = text;
    this.version = version;
    this.lines = [0]; // the index of each line's start
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x0a) {
        this.lines.push(i + 1);
      } else if (c === 0x0d) {
        if (text.charCodeAt(i + 1) === 0x0a) i++;
        this.lines.push(i + 1);
      }
    }
  }

  // lineEnd is where line's text ends, before its line break.
  lineEnd(line) {
    if (line + 1 >= this.lines.length) return this.text.length;
    let end = this.lines[line + 1] - 1;
    if (end > this.lines[line] && this.text.charCodeAt(end) === 0x0a && this.text.charCodeAt(end - 1) === 0x0d) end--;
    return end;
  }

  // offsetAt: a character beyond its line means the line's end, a line
  // beyond the last the document's end, a negative one its start.
  offsetAt(pos) {
    if (pos.line < 0) return 0;
    if (pos.line >= this.lines.length) return this.text.length;
    const start = this.lines[pos.line];
    const end = this.lineEnd(pos.line);
    if (pos.character <= 0) return start;
    let off = Math.min(start + pos.character, end);
    if (off > start && off < end && isLow(this.text.charCodeAt(off)) && isHigh(this.text.charCodeAt(off - 1))) off--;
    return off;
  }

  lineOf(off) {
    let lo = 0;
    let hi = this.lines.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.lines[mid] > off) hi = mid;
      else lo = mid + 1;
    }
    return lo - 1;
  }

  positionAt(off) {
    const line = this.lineOf(off);
    return { line, character: off - this.lines[line] };
  }

  // charBefore and charAt return the character (a whole surrogate pair)
  // ending or starting at off, and its length in code units.
  charBefore(off) {
    if (off >= 2 && isLow(this.text.charCodeAt(off - 1)) && isHigh(this.text.charCodeAt(off - 2))) return [this.text.slice(off - 2, off), 2];
    return [this.text[off - 1], 1];
  }

  charAt(off) {
    if (isHigh(this.text.charCodeAt(off)) && isLow(this.text.charCodeAt(off + 1))) return [this.text.slice(off, off + 2), 2];
    return [this.text[off], 1];
  }

  // wordAt returns the word that pos touches and its range, or null.
  wordAt(pos) {
    const off = this.offsetAt(pos);
    let start = off;
    let end = off;
    while (start > 0) {
      const [c, n] = this.charBefore(start);
      if (!wordChar.test(c)) break;
      start -= n;
    }
    while (end < this.text.length) {
      const [c, n] = this.charAt(end);
      if (!wordChar.test(c)) break;
      end += n;
    }
    if (start === end) return null;
    const s = this.positionAt(start);
    return { word: this.text.slice(start, end), range: { start: s, end: { line: s.line, character: s.character + end - start } } };
  }

  // todos returns the range of every TODO, in order.
  todos() {
    const out = [];
    for (let at = this.text.indexOf('TODO'); at >= 0; at = this.text.indexOf('TODO', at + 4)) {
      const s = this.positionAt(at);
      out.push({ start: s, end: { line: s.line, character: s.character + 4 } });
    }
    return out;
  }

  // apply returns the document after changes, at version: a change
  // without a range replaces the text, one with a range that range.
  apply(changes, version) {
    let next = this;
    for (const ch of changes ?? []) {
      let text = ch.text ?? '';
      if (ch.range != null) {
        let start = next.offsetAt(pos(ch.range.start));
        let end = next.offsetAt(pos(ch.range.end));
        if (end < start) [start, end] = [end, start];
        text = next.text.slice(0, start) + text + next.text.slice(end);
      }
      next = new Document(text, version);
    }
    return new Document(next.text, version);
  }
}

// pos reads a position as Go decodes one: absent members are 0.
function pos(p) {
  return { line: p?.line ?? 0, character: p?.character ?? 0 };
}

// goG formats a number as Go's %g does (the shortest digits; an exponent,
// of two digits at least, below 1e-4 and from 1e6 up).
function goG(x) {
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const [mant, e] = x.toExponential().split('e');
  const exp = Number(e);
  if (exp < -4 || exp >= 6) return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(x);
}

// sleep resolves after ms, or rejects with RequestCancelled once token is
// cancelled. A timer's delay is at most 2^31-1 ms (about 24.8 days; a
// longer one would fire at once).
function sleep(ms, token) {
  return new Promise((resolve, reject) => {
    const cancelled = () => reject(new ResponseError(RequestCancelled, 'request cancelled'));
    if (token.isCancellationRequested) return cancelled();
    let sub;
    const timer = setTimeout(() => {
      sub?.dispose();
      resolve(null);
    }, Math.min(ms, 2 ** 31 - 1));
    sub = token.onCancellationRequested(() => {
      clearTimeout(timer);
      cancelled();
    });
  });
}

// ---- A connection: its session and its handlers.

const phaseNew = 0;
const phaseInitialized = 1;
const phaseShutDown = 2;

// FlushWriter is the connection's writer, which also says when what was
// written has left: exit waits for it, so that the answers written before
// (shutdown's) are not lost when the process ends.
class FlushWriter {
  constructor(inner) {
    this.inner = inner;
    this.last = Promise.resolve();
    this.onError = inner.onError;
    this.onClose = inner.onClose;
  }
  write(msg) {
    const p = this.inner.write(msg);
    this.last = p.catch(() => {});
    return p;
  }
  flushed() {
    return this.last;
  }
  end() {
    this.inner.end();
  }
  dispose() {
    this.inner.dispose();
  }
}

// serve runs the handlers on a connection of reader and writer. end(code)
// ends it: the process on stdio, the connection on a socket.
function serve(reader, inner, end) {
  const writer = new FlushWriter(inner);
  const conn = createMessageConnection(reader, writer);
  const s = { phase: phaseNew, wantsConfig: false, askedConfig: false, docs: new Map(), exited: false, running: 0, idle: null };
  const exitCode = () => (s.phase === phaseShutDown ? 0 : 1);

  // refusal is the life cycle's answer to method, or null to serve it.
  const refusal = (method) => {
    switch (s.phase) {
      case phaseNew:
        return method === 'initialize' ? null : new ResponseError(ServerNotInitialized, 'the server is not initialized: initialize comes first');
      case phaseInitialized:
        return method === 'initialize' ? new ResponseError(InvalidRequest, 'initialize was already received') : null;
      default:
        return new ResponseError(InvalidRequest, 'the server is shut down: only exit may follow');
    }
  };
  // A handler's last argument is its cancellation token; the others are
  // its params (spread when they are an array, none when absent).
  const request = (method, handler) =>
    conn.onRequest(method, (...args) => {
      const refuse = refusal(method);
      if (refuse) throw refuse;
      const token = args.pop();
      s.running++;
      const done = () => {
        if (--s.running === 0 && s.idle) s.idle();
      };
      try {
        const result = handler(args, token);
        if (result instanceof Promise) return result.finally(done);
        done();
        return result;
      } catch (e) {
        done();
        throw e;
      }
    });
  const notification = (method, handler) =>
    conn.onNotification(method, (...args) => {
      if (refusal(method)) return;
      return handler(args[0]);
    });

  const logMessage = (type, message) => conn.sendNotification('window/logMessage', { type, message });
  const publish = (uri, d) =>
    conn.sendNotification('textDocument/publishDiagnostics', {
      uri,
      version: d.version,
      diagnostics: d.todos().map((range) => ({ range, severity: SeverityWarning, source: serverName, message: 'TODO: something is left to do' })),
    });

  request('initialize', ([p]) => {
    s.phase = phaseInitialized;
    s.wantsConfig = p?.capabilities?.workspace?.configuration === true;
    return {
      capabilities: { textDocumentSync: 1, hoverProvider: true, executeCommandProvider: { commands: [cmdWait] } },
      serverInfo: { name: serverName, version: serverVersion },
    };
  });

  notification('initialized', async () => {
    const ask = s.wantsConfig && !s.askedConfig;
    s.askedConfig = true;
    if (!ask) return;
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('context deadline exceeded')), configTimeout);
    });
    let res;
    try {
      res = await Promise.race([conn.sendRequest('workspace/configuration', { items: [{ section: 'toy' }] }), timeout]);
    } catch (e) {
      const text = e instanceof ResponseError ? `jsonrpc error ${e.code}: ${e.message}` : e.message;
      logMessage(MessageError, `workspace/configuration: 0 items, ${text}`);
      return;
    } finally {
      clearTimeout(timer);
    }
    const n = Array.isArray(res) ? res.length : 0;
    if (n !== 1) {
      logMessage(MessageError, `workspace/configuration: ${n} items, <nil>`);
      return;
    }
    logMessage(MessageInfo, 'configuration toy: ' + JSON.stringify(res[0]));
  });

  request('shutdown', () => {
    s.phase = phaseShutDown;
    return null;
  });

  // exit is never refused: it ends the connection, once what was written
  // before it has left.
  conn.onNotification('exit', async () => {
    if (s.exited) return;
    s.exited = true;
    const code = exitCode();
    await writer.flushed();
    end(code);
  });

  notification('textDocument/didOpen', (p) => {
    const item = p?.textDocument ?? {};
    const d = new Document(item.text ?? '', item.version ?? 0);
    s.docs.set(item.uri ?? '', d);
    publish(item.uri ?? '', d);
  });

  notification('textDocument/didChange', (p) => {
    const uri = p?.textDocument?.uri ?? '';
    let d = s.docs.get(uri);
    if (!d) {
      logMessage(MessageError, 'didChange of a document not open: ' + uri);
      return;
    }
    d = d.apply(p.contentChanges, p.textDocument.version ?? 0);
    s.docs.set(uri, d);
    publish(uri, d);
  });

  notification('textDocument/didClose', (p) => {
    const uri = p?.textDocument?.uri ?? '';
    s.docs.delete(uri);
    conn.sendNotification('textDocument/publishDiagnostics', { uri, diagnostics: [] });
  });

  request('textDocument/hover', ([p]) => {
    const d = s.docs.get(p?.textDocument?.uri ?? '');
    if (!d) return null;
    const w = d.wordAt(pos(p.position));
    if (!w) return null;
    return { contents: { kind: 'markdown', value: `**${w.word}**` }, range: w.range };
  });

  request('workspace/executeCommand', async ([p], token) => {
    const command = p?.command ?? '';
    if (command !== cmdWait) throw new ResponseError(InvalidParams, 'unknown command: ' + command);
    const args = p.arguments ?? [];
    const ms = args[0] === null ? 0 : args[0]; // null is 0, as Go decodes it into a float64
    if (args.length !== 1 || typeof ms !== 'number' || ms < 0) {
      throw new ResponseError(InvalidParams, `${cmdWait} takes one argument: the milliseconds to wait`);
    }
    logMessage(MessageLog, `${cmdWait}: waiting ${goG(ms)} ms`);
    return sleep(ms, token);
  });

  request('toy/add', (nums) => nums.reduce((a, b) => a + b, 0));

  request('toy/fail', (params) => {
    const echoed = params.length === 0 ? null : params.length === 1 ? params[0] : params;
    throw new ResponseError(ToyFailure, 'toy/fail failed as asked', { params: echoed, hint: 'toy/fail fails on purpose' });
  });

  // The client left: the requests running answer (for a short grace),
  // then the connection ends as exit would end it.
  conn.onClose(async () => {
    if (s.exited) return;
    s.exited = true;
    if (s.running > 0) {
      await new Promise((resolve) => {
        s.idle = resolve;
        setTimeout(resolve, grace);
      });
      await writer.flushed();
    }
    end(exitCode());
  });
  conn.listen();
  return s;
}

// ---- Serving stdio, or a listener.

function fail(message) {
  process.stderr.write(`lsp: ${message}\n`);
  process.exit(1);
}

const args = process.argv.slice(2);
if (args.length === 0) {
  serve(new StreamMessageReader(process.stdin), new StreamMessageWriter(process.stdout), (code) => process.exit(code));
} else if (args.length === 2 && (args[0] === '-listen' || args[0] === '--listen')) {
  listen(args[1]);
} else {
  fail(`unexpected arguments ${JSON.stringify(args)}`);
}

function listen(addr) {
  const i = addr.indexOf(':');
  const network = addr.slice(0, i);
  const address = addr.slice(i + 1);
  if (i < 0 || (network !== 'tcp' && network !== 'unix') || address === '') {
    fail(`-listen "${addr}": want tcp:HOST:PORT or unix:PATH`);
  }
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    // exit ends this connection only: after shutdown once what was
    // written has left, at once otherwise.
    serve(new SocketMessageReader(socket), new SocketMessageWriter(socket), (code) => {
      if (code === 0) socket.end();
      else socket.destroy();
    });
  });
  server.on('error', (e) => fail(e.message));
  const onListening = () => {
    const a = server.address();
    const where = typeof a === 'string' ? a : a.address.includes(':') ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
    process.stderr.write(`lsp: listening on ${network}:${where}\n`);
  };
  if (network === 'unix') {
    server.listen(address, onListening);
  } else {
    const j = address.lastIndexOf(':');
    server.listen({ host: address.slice(0, j).replace(/^\[|\]$/g, ''), port: Number(address.slice(j + 1)) }, onListening);
  }
  // SIGINT or SIGTERM ends the server: the connections are closed once
  // their writes have left (within the grace), then the process exits 0.
  const stop = () => {
    server.close();
    for (const socket of sockets) socket.end();
    const timer = setTimeout(() => process.exit(0), grace);
    const check = () => {
      if (sockets.size === 0) {
        clearTimeout(timer);
        process.exit(0);
      }
    };
    for (const socket of sockets) socket.on('close', check);
    check();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
