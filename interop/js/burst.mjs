// burst.mjs: a shutdown request written together with many other requests,
// through the real HarnessClient, against the runtime binary argv[2]. The
// Go runtime exits by itself once its shutdown reply is written; this
// checks it still does when that reply shares a write with other replies.
// Prints one JSON report: per round, whether the runtime exited on its own
// within graceMs of the shutdown reply, and its exit status.
import { HarnessClient } from '@deepseek-ai/dsh-sdk-client';

const bin = process.argv[2];
const rounds = Number(process.argv[3] ?? 5);
const burst = Number(process.argv[4] ?? 200);
// A failure bound, not a pace: a runtime that exits by itself does so at
// once; one that does not is given this long before it is called stuck.
const graceMs = 15000;
const out = [];
for (let round = 0; round < rounds; round++) {
  const client = new HarnessClient({ command: bin, requestTimeoutMs: 10000, disposeEofGraceMs: 500, disposeGraceMs: 1000 });
  client.start();
  await client.initialize({ cwd: '/', provider: 'deepseek-official', model: 'm' });
  const child = client.child;
  const exited = new Promise((resolve) => child.once('exit', () => resolve(true)));
  // All written in one tick: the replies race for the runtime's writer.
  const others = [];
  for (let i = 0; i < burst; i++) others.push(client.request('no/such', {}).catch(() => {}));
  const shutdown = client.request('shutdown', {}).then(
    () => 'ok',
    (e) => e.message,
  );
  for (let i = 0; i < burst; i++) others.push(client.request('no/such', {}).catch(() => {}));
  const reply = await shutdown;
  await Promise.all(others);
  const byItself = await Promise.race([exited, new Promise((r) => setTimeout(() => r(false), graceMs).unref())]);
  await client.close();
  out.push({ reply, exitedByItself: byItself, exitCode: client.exitCode ?? null, signal: child.signalCode });
}
process.stdout.write(JSON.stringify(out) + '\n');
