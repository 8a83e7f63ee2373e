// openrpc-coverage.mjs: runs the real @open-rpc/test-coverage against a
// JSON-RPC 2.0 server over HTTP, with nothing but its OpenRPC document.
//
//   node openrpc-coverage.mjs DOC.json URL [--only m1,m2] [--skip m3] [--calls N]
//        [--seed N] [--timeout MS] [--error-fails]
//
// The document is loaded as the tool's own CLI loads it (parseOpenRPCDocument:
// validated and dereferenced), offline: a $ref that is not internal, or a
// recursive schema, is refused (openrpc-doc.mjs says why). Then
// test-coverage's default export is called with the dereferenced document,
// its two default rules and a transport that is its own HTTP transport (a
// POST of {"jsonrpc":"2.0","id":n,"method","params"} with
// isomorphic-fetch) sent to URL: test-coverage itself sends every call to
// the document's servers[0].url, which is not the server under test.
//
// What test-coverage 2.2.4 checks, per method, one call at a time:
//  - "json-schema-faker" rule, for a method without examples: N calls
//    (--calls, default 10; 1 when the method has no params), the params
//    generated from each param's schema by json-schema-faker (by-name: an
//    object keyed by the params' names; otherwise an array); the answer's
//    result must validate against the result's schema (ajv 7, default
//    options). An error answer is NOT a failure by itself: its result is
//    undefined, which fails a schema with a type and passes {} or true.
//    --error-fails makes every error answer a failure.
//  - "examples" rule, for each of the method's examples: the example's
//    params; the result must equal the example's result, or else validate
//    against the result's schema; an error answer fails.
// A method without a result (a notification) is skipped: test-coverage
// 2.2.4 reads method.result.schema and would throw for it.
// json-schema-faker's random numbers come from a generator seeded with
// --seed (default 1), so a run is repeatable.
//
// Output, one JSON line on stdout:
//   {"url":"...","seed":1,"passed":12,"failed":0,
//    "skipped":[{"method":"log","reason":"..."}],
//    "methods":[{"name":"add","passed":10,"failed":0,"calls":[
//       {"rule":"json-schema-faker","title":"...","params":{...},
//        "result":...,"error":{...},"valid":true,"reason":"..."}]}]}
// (result, error and reason only when there are). Exit 0 if every call
// passed, 1 if any failed (the report is still printed; stderr names the
// failed calls) or on any other failure (a message on stderr), 2 on usage.
import { createRequire } from 'node:module';
import { Failure, main, usage, loadDocument } from './openrpc-doc.mjs';

const require = createRequire(import.meta.url);
const coverage = require('@open-rpc/test-coverage').default;
const httpTransport = require('@open-rpc/test-coverage/build/transports/HTTPTransport.js').default;
const JsonSchemaFakerRule = require('@open-rpc/test-coverage/build/rules/json-schema-faker-rule.js').default;
const ExamplesRule = require('@open-rpc/test-coverage/build/rules/examples-rule.js').default;
// The json-schema-faker instance the rule uses (required from the rule's own
// folder), to seed it.
const jsf = createRequire(require.resolve('@open-rpc/test-coverage/build/rules/json-schema-faker-rule.js'))('json-schema-faker');

const USAGE = 'openrpc-coverage.mjs DOC.json URL [--only m1,m2] [--skip m] [--calls N] [--seed N] [--timeout MS] [--error-fails]';

// mulberry32: a small seeded generator of numbers in [0, 1).
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function parseArgs(argv) {
  const o = { only: [], skip: [], calls: 10, seed: 1, timeout: 30000, errorFails: false, pos: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw usage(USAGE);
      return argv[++i];
    };
    const int = (s) => {
      if (!/^\d+$/.test(s)) throw usage(USAGE);
      return Number(s);
    };
    if (a === '--only') o.only = value().split(',').filter(Boolean);
    else if (a === '--skip') o.skip = value().split(',').filter(Boolean);
    else if (a === '--calls') o.calls = int(value());
    else if (a === '--seed') o.seed = int(value());
    else if (a === '--timeout') o.timeout = int(value());
    else if (a === '--error-fails') o.errorFails = true;
    else if (a.startsWith('--')) throw usage(USAGE);
    else o.pos.push(a);
  }
  if (o.pos.length !== 2 || o.calls < 1) throw usage(USAGE);
  return o;
}

function errorText(e) {
  return e?.message ?? String(e);
}

await main('openrpc-coverage', async () => {
  const opts = parseArgs(process.argv.slice(2));
  const [path, url] = opts.pos;
  try {
    new URL(url);
  } catch {
    throw usage(`${USAGE} (${JSON.stringify(url)} is not a URL)`);
  }
  const { doc } = await loadDocument(path);
  const names = doc.methods.map((m) => m.name);
  for (const n of [...opts.only, ...opts.skip]) {
    if (!names.includes(n)) throw new Failure(`${path} has no method ${JSON.stringify(n)} (it has ${names.join(', ')})`);
  }

  const skipped = [];
  const skip = [...opts.skip];
  for (const m of doc.methods) {
    if (opts.skip.includes(m.name)) skipped.push({ method: m.name, reason: 'skipped with --skip' });
    else if (opts.only.length > 0 && !opts.only.includes(m.name)) skipped.push({ method: m.name, reason: 'not in --only' });
    else if (m.result === undefined) {
      skip.push(m.name);
      skipped.push({ method: m.name, reason: 'no result (a notification): test-coverage 2.2.4 reads method.result.schema and cannot call it' });
    }
  }
  if (skipped.length === doc.methods.length) throw new Failure(`no method of ${path} to call: ${JSON.stringify(skipped)}`);

  jsf.option({ random: seeded(opts.seed) });
  const transport = (_docURL, method, params) => {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer to ${method} within ${opts.timeout} ms`)), opts.timeout);
    });
    return Promise.race([httpTransport(url, method, params), timeout]).finally(() => clearTimeout(timer));
  };
  // test-coverage's reporters print on stdout; this one keeps quiet, the
  // calls are what coverage() returns.
  const quiet = { onBegin() {}, onTestBegin() {}, onTestEnd() {}, onEnd() {} };
  let calls;
  try {
    calls = await coverage({
      openrpcDocument: doc,
      transport,
      reporters: [quiet],
      rules: [new JsonSchemaFakerRule({ numCalls: opts.calls }), new ExamplesRule()],
      skip,
      only: opts.only,
    });
  } catch (e) {
    // json-schema-faker throws while generating params, before any call, for
    // a "format" it does not know ("unknown registry key").
    const first = errorText(e).split('\n')[0].replace(/^(Error: )+/, '');
    throw new Failure(`test-coverage stopped before its report: ${first}${/registry key/.test(first) ? ' (json-schema-faker, generating params, knows no such "format")' : ''}`);
  }

  const byMethod = new Map();
  for (const m of doc.methods) if (!skipped.some((s) => s.method === m.name)) byMethod.set(m.name, { name: m.name, passed: 0, failed: 0, calls: [] });
  let passed = 0;
  let failed = 0;
  const failures = [];
  for (const c of calls) {
    const out = {
      rule: c.rule instanceof ExamplesRule ? 'examples' : 'json-schema-faker',
      title: c.title,
      params: c.params,
    };
    if (c.result !== undefined) out.result = c.result;
    if (c.error !== undefined) out.error = c.error;
    let valid = c.valid === true;
    let reason = c.reason;
    if (c.requestError !== undefined) reason = `request failed: ${errorText(c.requestError)}`;
    if (valid && opts.errorFails && c.error !== undefined) {
      valid = false;
      reason = `error answer (--error-fails): ${JSON.stringify(c.error)}`;
    }
    if (!valid && reason === undefined) reason = c.error !== undefined ? `error answer: ${JSON.stringify(c.error)}` : 'invalid';
    out.valid = valid;
    if (reason !== undefined) out.reason = reason;
    const m = byMethod.get(c.methodName);
    m.calls.push(out);
    if (valid) {
      m.passed++;
      passed++;
    } else {
      m.failed++;
      failed++;
      failures.push(`${c.methodName} ${c.title}: ${String(reason).replace(/\s+/g, ' ').slice(0, 300)}`);
    }
  }
  const report = { url, seed: opts.seed, passed, failed, skipped, methods: [...byMethod.values()] };
  if (failed > 0) {
    throw new Failure(`${failed} of ${passed + failed} calls failed:\n  ${failures.join('\n  ')}`, report);
  }
  return report;
}, { exit: true });
