// replay.mjs: the real @deepseek-ai/dsh-sdk-client (HarnessClient,
// DeepSeekHarness) driving `dshrpc serve-replay RECORDING`: argv[2] is the
// dshrpc binary, argv[3] the recording (a transcript of testdata), argv[4]
// a JSON object {provider, model, maxTokens, prompt} of the recorded route
// and prompt text. Each scenario starts its own runtime. It prints one JSON
// report on stdout; the Go test checks it. Nothing here asserts: every
// outcome is reported as observed. Every wait is bounded by a minute and
// fails saying what it waited for.
import { DeepSeekHarness, HarnessClient, JsonRpcResponseError } from '@deepseek-ai/dsh-sdk-client';
import { signalsOf, summary } from './run_report.mjs';

const [bin, recording, spec] = process.argv.slice(2);
const { provider, model, maxTokens, prompt } = JSON.parse(spec);
const launch = { command: bin, args: ['serve-replay', recording], requestTimeoutMs: 60000 };
const route = { provider, model, ...(maxTokens === undefined ? {} : { maxTokens }) };
const report = {};

// bounded settles as p does, or rejects after a minute saying what it
// waited for.
function bounded(p, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`replay.mjs: no ${what} within a minute`)), 60000);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

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



async function closeReport(client, close) {
  const sent = signalsOf(client.child);
  const t0 = Date.now();
  await bounded(close(), 'end of close()');
  return {
    ms: Date.now() - t0,
    exitCode: client.exitCode ?? null,
    signal: client.child?.signalCode ?? null,
    stderr: client.stderrTail,
    ladderSignals: sent,
  };
}

// 1. HarnessClient: initialize, prompt on a session of its own, the
//    session tree's notifications from the receipt to the root idle, close.
{
  const client = new HarnessClient(launch);
  client.start();
  report.initialize = await attempt(() => bounded(client.initialize({ cwd: process.cwd(), ...route }), 'initialize reply'));
  const session = 'low-level-session';
  const sub = client.subscribeSessionTree(session);
  report.prompt = await attempt(() => bounded(client.prompt(session, [{ type: 'text', text: prompt }]), 'session/prompt reply'));
  const seen = [];
  if (report.prompt.ok) {
    let received = false;
    for (;;) {
      const n = await bounded(sub.next(), `notification of ${session} (the receipt, then the root idle)`);
      if (!received) {
        const ev = n.params.event;
        received = n.params.sessionId === session && ev?.type === 'agent/inbox/spliced' && ev.data.inserted.some((m) => m.id === report.prompt.value);
        if (!received) continue;
      }
      seen.push(n);
      if (n.method === 'session.status' && n.params.sessionId === session && n.params.status === 'idle') break;
    }
  }
  sub.close();
  report.lowLevel = {
    notifications: seen.length,
    sessions: [...new Set(seen.map((n) => n.params.sessionId ?? n.params.parentSessionId))],
  };
  report.lowClose = await closeReport(client, () => client.close());
}

// 2. DeepSeekHarness.run(): a freshly minted session id, the recorded
//    prompt text, the recording's final response.
{
  const harness = new DeepSeekHarness({ launch, ...route });
  const run = await attempt(() => bounded(harness.run(prompt), 'end of run()'));
  report.run = run.ok ? { ok: true, ...summary(run.value) } : run;
  report.runClose = await closeReport(harness.client, () => harness.close());
}

// 3. A departure: run() with a prompt the recording does not have is
//    refused with the line and what differed; the runtime exits 1.
{
  const harness = new DeepSeekHarness({ launch, ...route });
  report.departure = await attempt(() => bounded(harness.run('a prompt the recording does not have'), 'end of run()'));
  const client = harness.client;
  const child = client.child;
  await bounded(
    new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', resolve))),
    'exit of the runtime after the departure',
  );
  report.departureClose = await closeReport(client, () => harness.close());
}

process.stdout.write(JSON.stringify(report) + '\n');
