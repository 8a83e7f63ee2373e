// peer.mjs: the real @deepseek-ai/dsh-sdk-protocol JsonRpcLineTransport on
// this process's stdin/stdout, driven by the Go interop tests.
//
//   node peer.mjs serve   # request handler installed (the methods below)
//   node peer.mjs bare    # no request handler, like the TypeScript client
//
// Every method is a small, fixed behaviour the Go test can observe on the
// wire; the Go side decides what to send and checks what comes back. The
// program also checks its own side's bytes: every write of the transport
// must be exactly one compact frame and one LF (see `stats`).
//
// With INTEROP_ACK=1, every chunk read from stdin is acknowledged on stderr
// as "ack <total bytes>", so that the Go test can split a frame across
// writes deterministically (it waits for the ack before the next part).
import { JsonRpcLineTransport, JsonRpcResponseError } from '@deepseek-ai/dsh-sdk-protocol';

const mode = process.argv[2] ?? 'serve';
const transport = new JsonRpcLineTransport(process.stdin, process.stdout);

// Byte-level check of our own writes. The transport writes through
// output.write, so wrapping it sees exactly the calls it makes.
const rawWrite = process.stdout.write.bind(process.stdout);
const stats = { writes: 0, badWrites: [], inChunks: 0, inBytes: 0, splitChunks: 0 };
process.stdout.write = (chunk, ...rest) => {
  if (typeof chunk === 'string' && chunk !== '') {
    stats.writes++;
    const body = chunk.slice(0, -1);
    let ok = chunk.endsWith('\n') && !body.includes('\n');
    if (ok) {
      try {
        ok = JSON.stringify(JSON.parse(body)) === body;
      } catch {
        ok = false;
      }
    }
    if (!ok && stats.badWrites.length < 10) stats.badWrites.push(chunk.slice(0, 200));
  }
  return rawWrite(chunk, ...rest);
};

// Input chunk bookkeeping: how the bytes arrived (a chunk ending inside a
// UTF-8 sequence proves the transport's decoder had to join it).
const ack = process.env.INTEROP_ACK === '1';
process.stdin.on('data', (chunk) => {
  stats.inChunks++;
  stats.inBytes += chunk.length;
  if (endsInsideUtf8(chunk)) stats.splitChunks++;
  if (ack) process.stderr.write(`ack ${stats.inBytes}\n`);
});

function endsInsideUtf8(buf) {
  // Walk back over continuation bytes to the lead byte of the last sequence.
  let i = buf.length - 1;
  let cont = 0;
  while (i >= 0 && (buf[i] & 0xc0) === 0x80 && cont < 3) {
    i--;
    cont++;
  }
  if (i < 0) return cont > 0;
  const lead = buf[i];
  const need = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : 0;
  return need > cont;
}

// Notifications from Go, in arrival order; `continue` releases splitSend.
const notes = [];
// Counted, so that a `continue` that arrives before splitSend waits for it
// is not lost.
let continues = 0;
let continueWaiters = [];
transport.onNotification((method, params) => {
  if (method === 'continue') {
    continues++;
    const waiters = continueWaiters;
    continueWaiters = [];
    for (const w of waiters) w();
    return;
  }
  notes.push({ method, params });
});

// gather: requests held until n of a group arrived, then answered in
// reverse arrival order, so the responses leave out of order.
const groups = new Map();

/** Describe a settled call of ours to Go, for the Go test to check. */
function outcome(promise) {
  return promise.then(
    (result) => ({ ok: true, result: result === undefined ? '<undefined>' : result }),
    (error) => ({
      ok: false,
      name: error?.name,
      isResponseError: error instanceof JsonRpcResponseError,
      code: error?.code === undefined ? '<undefined>' : error.code,
      message: error?.message,
      data: error?.data === undefined ? '<undefined>' : error.data,
    }),
  );
}

const methods = {
  echo: async (params) => params,
  fail: async (params) => {
    throw new Error(params.message);
  },
  throwString: async (params) => {
    throw params.value; // a non-Error rejection: String(value) on the wire
  },
  hang: () => new Promise(() => {}),
  big: async ({ unit, count }) => ({ text: unit.repeat(count) }),
  gather: ({ group, n }) =>
    new Promise((resolve) => {
      let g = groups.get(group);
      if (!g) groups.set(group, (g = []));
      g.push(resolve);
      if (g.length === n) {
        groups.delete(group);
        for (let i = g.length - 1; i >= 0; i--) g[i]({ order: g.length - 1 - i });
      }
    }),
  emit: async ({ method, count }) => {
    for (let seq = 0; seq < count; seq++) transport.notify(method, { seq });
    return { sent: count };
  },
  emitBare: async ({ method }) => {
    transport.notify(method); // no params member
    return {};
  },
  notes: async ({ clear }) => {
    const out = notes.slice();
    if (clear) notes.length = 0;
    return { notes: out };
  },
  noteSummary: async ({ method }) => {
    const seqs = notes.filter((n) => n.method === method).map((n) => n.params.seq);
    const inOrder = seqs.every((s, i) => s === i);
    notes.length = 0;
    return { count: seqs.length, inOrder };
  },
  // call: one request of ours to Go; params.params absent sends none.
  call: async (p) => outcome(transport.request(p.method, 'params' in p ? p.params : undefined)),
  // callExpect: like call, but only says whether result.s equals
  // unit.repeat(count), so an 8 MiB result does not travel back a third time.
  callExpect: async (p) => {
    const o = await outcome(transport.request(p.method, p.params));
    const same = o.ok && o.result?.s === p.unit.repeat(p.count);
    return { ok: o.ok, same, message: o.message };
  },
  notify: async (p) => {
    transport.notify(p.method, 'params' in p ? p.params : undefined);
    return {};
  },
  // callMany: n pipelined requests to Go (all written before any reply is
  // read), each checked against its own i; settlement order is recorded.
  callMany: async ({ method, n }) => {
    const settled = [];
    const calls = [];
    for (let i = 0; i < n; i++) {
      calls.push(
        transport.request(method, { i, n }).then((r) => {
          settled.push(i);
          return r && r.i === i;
        }),
      );
    }
    const results = await Promise.allSettled(calls);
    const good = results.filter((r) => r.status === 'fulfilled' && r.value === true).length;
    const outOfOrder = settled.some((v, k) => k > 0 && v < settled[k - 1]);
    return { good, outOfOrder, firstSettled: settled.slice(0, 5) };
  },
  // splitSend: write the given byte parts raw (one frame cut anywhere),
  // waiting for Go's `continue` notification between parts.
  splitSend: async ({ parts }) => {
    continues = 0;
    for (let k = 0; k < parts.length; k++) {
      while (k > 0 && continues < k) await new Promise((resolve) => continueWaiters.push(resolve));
      await new Promise((resolve) => rawWrite(Buffer.from(parts[k], 'base64'), resolve));
    }
    return { parts: parts.length };
  },
  // pendingUntilEnd: leave a request to Go pending and report (as a
  // notification) how it settles; the handler itself answers at once.
  pendingUntilEnd: async ({ method }) => {
    outcome(transport.request(method, {})).then((o) => transport.notify('report', o));
    return { sent: true };
  },
  // closeWithPending: a request to Go is pending; close() the transport and
  // report the rejection. Nothing is read afterwards.
  closeWithPending: async ({ method }) => {
    const pending = outcome(transport.request(method, {}));
    transport.close();
    const o = await pending;
    return o;
  },
  stats: async () => stats,
  exit: async ({ code }) => {
    // Answer first, then exit: the Go side sees the reply, then the end.
    setImmediate(() => transport.flush().then(() => process.exit(code ?? 0)));
    return {};
  },
};

if (mode === 'serve') {
  transport.onRequest(async (method, params) => {
    const m = methods[method];
    if (!m) throw new Error(`peer.mjs: no method ${method}`);
    return m(params);
  });
}
transport.start();
