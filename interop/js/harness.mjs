// harness.mjs: the real @deepseek-ai/dsh-sdk-client (HarnessClient,
// DeepSeekHarness) driving a runtime binary given as argv[2] (the Go demo
// runtime, interop/cmd/demoruntime). It runs a fixed script and prints one
// JSON report on stdout; the Go test checks the report. Nothing here
// asserts: every outcome, error or not, is reported as observed.
import { DeepSeekHarness, HarnessClient, JsonRpcResponseError } from '@deepseek-ai/dsh-sdk-client';
import { signalsOf, summary } from './run_report.mjs';

const bin = process.argv[2];
const launch = { command: bin, args: [], requestTimeoutMs: 20000 };
const report = {};

function errInfo(e) {
  return {
    name: e?.name,
    isResponseError: e instanceof JsonRpcResponseError,
    code: e?.code ?? null,
    message: e?.message,
  };
}

async function attempt(f) {
  try {
    return { ok: true, value: await f() };
  } catch (e) {
    return { ok: false, ...errInfo(e) };
  }
}

function exitOf(client) {
  // exitCode is set by the client's own exit listener; signalCode by Node.
  return { exitCode: client.exitCode ?? null, signal: client.child?.signalCode ?? null };
}



async function timed(f) {
  const t0 = Date.now();
  await f();
  return Date.now() - t0;
}

// 1. The low-level HarnessClient: the handshake and error surfaces.
{
  const client = new HarnessClient(launch);
  client.start();
  report.earlyPrompt = await attempt(() => client.prompt('early', [{ type: 'text', text: 'hi' }]));
  report.initialize = await attempt(() =>
    client.initialize({ cwd: process.cwd(), provider: 'deepseek-official', model: 'deepseek-v4-flash', maxTokens: 4096 }),
  );
  report.badProvider = await attempt(() => client.initialize({ cwd: '/', provider: 'nope', model: 'm' }));
  report.unknownMethod = await attempt(() => client.request('no/such', { a: 1 }));
  const sub = client.subscribe();
  report.prompt = await attempt(() => client.prompt('low', [{ type: 'text', text: 'low level' }]));
  // The receipt and running were written before the reply (docs/wire.md §5.3):
  // they are already queued, no waiting needed.
  report.beforeReply = [sub.tryNext(), sub.tryNext()].map((n) => n && [n.method, n.params.event?.type ?? n.params.status]);
  sub.close();
  const sent = signalsOf(client.child);
  report.lowClose = { ms: await timed(() => client.close()), ...exitOf(client), stderr: client.stderrTail, ladderSignals: sent };
}

// 2. DeepSeekHarness.run(): two sessions at once, a second turn, a tool,
//    a subagent (the session tree reaches the TS subscriber), a failing turn.
{
  const harness = new DeepSeekHarness({ launch, maxTokens: 4096 });
  const [a, b] = await Promise.all([
    harness.run('hello from a', { sessionId: 's-a' }),
    harness.run('/think hello from b', { sessionId: 's-b' }),
  ]);
  report.runA = summary(a);
  report.runB = summary(b);
  report.runA2 = summary(await harness.run('/tool echoed', { sessionId: 's-a' }));
  const seen = [];
  const sub = await harness.run('/subagent child task', { sessionId: 's-sub', onNotification: (n) => seen.push(n.method) });
  report.subagent = {
    ...summary(sub),
    observed: seen.length,
    started: sub.notifications.filter((n) => n.method === 'subagent.started').map((n) => n.params),
    finished: sub.notifications
      .filter((n) => n.method === 'subagent.finished')
      .map((n) => ({ status: n.params.status, stopReason: n.params.stopReason, provider: n.params.provider })),
  };
  report.fail = summary(await harness.run('/fail model broke', { sessionId: 's-f' }));
  const sent = signalsOf(harness.client.child);
  report.harnessClose = {
    ms: await timed(() => harness.close()),
    ...exitOf(harness.client),
    stderr: harness.client.stderrTail,
    ladderSignals: sent,
  };
  report.afterClose = await attempt(() => harness.run('late'));
}

// 3. The teardown ladder's rungs, each on its own runtime, mid-turn.
for (const rung of ['close-mid-turn', 'stdin-eof', 'sigterm']) {
  const client = new HarnessClient(launch);
  client.start();
  await client.initialize({ cwd: process.cwd(), provider: 'deepseek-official', model: 'deepseek-v4-flash' });
  const sub = client.subscribe((n) => n.method === 'session.status');
  await client.prompt('slow', [{ type: 'text', text: '/slow a b c d e f g h i j' }]);
  await sub.next(); // running: the turn is in flight
  sub.close();
  const child = client.child;
  const exited = new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
  let ms, sent;
  if (rung === 'close-mid-turn') {
    sent = signalsOf(child);
    ms = await timed(() => client.close());
  }
  if (rung === 'stdin-eof') ms = await timed(() => (child.stdin.end(), exited));
  if (rung === 'sigterm') ms = await timed(() => (child.kill('SIGTERM'), exited));
  sent ??= signalsOf(child); // the ladder's own signals, not the rung's
  await client.close(); // reaps; a no-op ladder when already exited
  report[rung] = { ms, ...exitOf(client), ladderSignals: sent };
}

process.stdout.write(JSON.stringify(report) + '\n');
