// runtime.mjs: a runtime written in TypeScript's own transport (the real
// JsonRpcLineTransport on stdio) that replays a recorded real-runtime
// transcript (testdata/transcripts/*.ndjson): for each request it receives,
// in order, it writes the notifications the real runtime wrote before its
// reply, then the recorded reply, then the notifications that followed, as
// docs/wire.md §5.3 shows (the prompt result arrives after the first
// notifications). After the shutdown reply it flushes and exits 0, as the
// real runtime does.
import { readFileSync } from 'node:fs';
import { JsonRpcLineTransport } from '@deepseek-ai/dsh-sdk-protocol';

const entries = readFileSync(process.argv[2], 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l))
  .map((e) => ({ dir: e.dir, frame: JSON.parse(e.frame) }));

// Segments: one per client request, with what surrounded its reply.
const segments = [];
let current;
for (const { dir, frame } of entries) {
  if (dir === 'c2s') {
    if (frame.id === undefined || frame.method === undefined) continue;
    current = { method: frame.method, id: frame.id, before: [], reply: undefined, after: [] };
    segments.push(current);
    continue;
  }
  if (!current) continue;
  if (frame.method === undefined && frame.id === current.id) current.reply = frame;
  else if (frame.method !== undefined) (current.reply ? current.after : current.before).push(frame);
}

const transport = new JsonRpcLineTransport(process.stdin, process.stdout);
let next = 0;
transport.onRequest(async (method) => {
  const seg = segments[next++];
  if (!seg || seg.method !== method) throw new Error(`runtime.mjs: unexpected ${method} (script wants ${seg?.method})`);
  for (const n of seg.before) transport.notify(n.method, n.params);
  // The rest follows the reply: the transport writes the reply once this
  // handler's promise settles, before a macrotask runs.
  setImmediate(() => {
    for (const n of seg.after) transport.notify(n.method, n.params);
    if (method === 'shutdown') transport.flush().then(() => process.exit(0));
  });
  if (seg.reply.error) throw new Error(seg.reply.error.message);
  return seg.reply.result;
});
transport.start();
