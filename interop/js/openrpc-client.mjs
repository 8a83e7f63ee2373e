// openrpc-client.mjs: calls one method of a JSON-RPC 2.0 server over HTTP
// with the real @open-rpc/client-js (HTTPTransport, RequestManager, Client),
// building the request's params from nothing but the OpenRPC document.
//
//   node openrpc-client.mjs DOC.json URL METHOD [PARAMS_JSON | -] [--no-check] [--timeout MS]
//
// PARAMS_JSON (or stdin with "-"; absent: none) gives the values, either as an
// object keyed by the method's param names or as an array in the document's
// param order. The params sent follow the method in the document: its params
// list (each param, or a "#/components/contentDescriptors/X" ref to one) and
// its paramStructure: "by-name" sends an object with the document's names;
// "by-position", or "either" (the default), sends an array in the document's
// order, as the OpenRPC tools do (test-coverage, the generator's client);
// an omitted optional param at the end is left out. A value for a name the
// method does not have, or an omitted param before a given one in an array,
// is refused. A method without a result is a notification: it is sent
// without an id (client.notify) and nothing is awaited but the HTTP answer.
//
// Checks, unless --no-check: the document is a valid OpenRPC document
// (validateOpenRPCDocument), every required param is given, each value
// validates against its param's schema, and the result against the result's
// schema (ajv 8 with the whole document, see openrpc-ajv.mjs: the document
// is not dereferenced, so recursive schemas are fine). A $ref that is not
// internal is refused in any case.
//
// Output, one JSON line on stdout:
//   {"method":"add","params":{"a":1,"b":2},"result":{"value":3},"resultValid":true}
//   {"method":"log","params":{"message":"hi"},"notification":true}
//   {"method":"add","params":{...},"error":{"code":-32602,"message":"...","data":...},"errorDeclared":false}
// errorDeclared: the code is one of the method's documented errors. Exit 0
// on a result (valid, or --no-check) or a sent notification; 3 on an error
// answer (the line above on stdout, a message on stderr); 1 on a result
// that fails its schema (resultValid false, resultErrors: ajv's errors), on
// params the checks refuse or on a transport failure (no answer within
// --timeout MS, default 30000; no connection; an answer that is not JSON-RPC,
// which client-js reports with its code 7979); 2 on usage. The process exits
// as soon as the line is written.
import fs from 'node:fs';
import { Client, RequestManager, HTTPTransport, JSONRPCError } from '@open-rpc/client-js';
import { Failure, main, usage, readJSON, refuseExternalRefs, validateOpenRPCDocument, validationErrors } from './openrpc-doc.mjs';
import { docValidator } from './openrpc-ajv.mjs';

const USAGE = 'openrpc-client.mjs DOC.json URL METHOD [PARAMS_JSON | -] [--no-check] [--timeout MS]';
// client-js's own codes for failures of its own (Error.ts).
const ERR_TIMEOUT = 7777;
const ERR_UNKNOWN = 7979;

function parseArgs(argv) {
  const o = { check: true, timeout: 30000, pos: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--no-check') o.check = false;
    else if (a === '--timeout' && i + 1 < argv.length && /^\d+$/.test(argv[i + 1])) o.timeout = Number(argv[++i]);
    else if (a.startsWith('--')) throw usage(USAGE);
    else o.pos.push(a);
  }
  if (o.pos.length < 3 || o.pos.length > 4) throw usage(USAGE);
  return o;
}

// deref follows an internal $ref at pointer `at` of doc, once, returning the
// value and the JSON pointer where it is.
function deref(doc, value, at) {
  if (value && typeof value === 'object' && typeof value.$ref === 'string') {
    const ref = value.$ref;
    if (!ref.startsWith('#')) throw new Failure(`${at}: $ref ${ref} is not internal`);
    const pointer = ref.slice(1);
    let v = doc;
    for (const t of pointer === '' ? [] : pointer.slice(1).split('/')) {
      const k = decodeURIComponent(t).replaceAll('~1', '/').replaceAll('~0', '~');
      if (v === null || typeof v !== 'object' || !Object.hasOwn(v, k)) throw new Failure(`${at}: $ref ${ref} points at nothing`);
      v = v[k];
    }
    return { value: v, at: decodeURIComponent(pointer) };
  }
  return { value, at };
}

// within bounds p by ms. client-js's own request timeout is not used: over
// HTTP it rejects a promise nothing awaits while fetch still waits (an
// unhandled rejection that kills the process), and its timer is never
// cleared, so it holds the process for the whole timeout after the answer.
function within(p, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      const e = new Error(`no answer to ${what} within ${ms} ms`);
      e.timedOut = true;
      reject(e);
    }, ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

function readParams(arg) {
  if (arg === undefined) return undefined;
  const text = arg === '-' ? fs.readFileSync(0, 'utf8') : arg;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw usage(`${USAGE} (PARAMS_JSON is not JSON: ${e.message})`);
  }
}

await main('openrpc-client', async () => {
  const opts = parseArgs(process.argv.slice(2));
  const [path, url, methodName, paramsArg] = opts.pos;
  try {
    new URL(url);
  } catch {
    throw usage(`${USAGE} (${JSON.stringify(url)} is not a URL)`);
  }
  const input = readParams(paramsArg);
  const doc = readJSON(path);
  refuseExternalRefs(doc, path);
  if (opts.check) {
    const v = validateOpenRPCDocument(doc);
    if (v !== true) throw new Failure(`${path} is not a valid OpenRPC document: ${JSON.stringify(validationErrors(v))}`);
  }

  // The method and its params, as the document has them.
  const methods = (doc.methods ?? []).map((m, i) => deref(doc, m, `/methods/${i}`));
  const found = methods.find((m) => m.value?.name === methodName);
  if (!found) throw new Failure(`${path} has no method ${JSON.stringify(methodName)} (it has ${methods.map((m) => m.value?.name).join(', ')})`);
  const method = found.value;
  const params = (method.params ?? []).map((p, i) => deref(doc, p, `${found.at}/params/${i}`));
  const names = params.map((p) => p.value.name);
  const structure = method.paramStructure ?? 'either';

  // The values given, by name.
  const given = new Map();
  if (Array.isArray(input)) {
    if (input.length > params.length) throw new Failure(`${methodName} has ${params.length} param(s) (${names.join(', ')}); ${input.length} values given`);
    input.forEach((v, i) => given.set(names[i], v));
  } else if (input !== undefined && input !== null && typeof input === 'object') {
    for (const [k, v] of Object.entries(input)) {
      if (!names.includes(k)) throw new Failure(`${methodName} has no param ${JSON.stringify(k)} (it has ${names.join(', ') || 'none'})`);
      given.set(k, v);
    }
  } else if (input !== undefined) {
    throw new Failure(`PARAMS_JSON is an object (by name) or an array (by position), not ${JSON.stringify(input)}`);
  }

  const v = opts.check ? docValidator(doc) : undefined;
  if (opts.check) {
    const problems = [];
    for (const p of params) {
      const { name, required, schema } = p.value;
      if (!given.has(name)) {
        if (required) problems.push(`required param ${name} not given`);
        continue;
      }
      if (schema === undefined) continue;
      const validate = v.at(`${p.at}/schema`);
      if (!validate(given.get(name))) problems.push(`param ${name}: ${JSON.stringify(validate.errors)}`);
    }
    if (problems.length > 0) throw new Failure(`the params of ${methodName} do not match the document (--no-check sends them anyway): ${problems.join('; ')}`);
  }

  let wire;
  if (structure === 'by-name') {
    wire = {};
    for (const n of names) if (given.has(n)) wire[n] = given.get(n);
  } else {
    wire = [];
    let gap;
    for (const n of names) {
      if (given.has(n)) {
        if (gap !== undefined) throw new Failure(`${methodName} takes its params by position: ${gap} is omitted but ${n}, after it, is given`);
        wire.push(given.get(n));
      } else if (gap === undefined) gap = n;
    }
  }

  const transport = new HTTPTransport(url);
  const client = new Client(new RequestManager([transport]));
  const out = { method: methodName, params: wire };
  try {
    if (method.result === undefined) {
      await within(client.notify({ method: methodName, params: wire }), opts.timeout, methodName);
      out.notification = true;
      return out;
    }
    try {
      out.result = await within(client.request({ method: methodName, params: wire }), opts.timeout, methodName);
    } catch (e) {
      if (!(e instanceof JSONRPCError) || e.code === ERR_UNKNOWN || e.code === ERR_TIMEOUT || e.timedOut) {
        // client-js wraps fetch's error (as data) in one of the same message.
        const inner = e?.data instanceof Error ? e.data : undefined;
        const cause = inner
          ? `${inner.message === e.message ? '' : `: ${inner.message}`}${inner.cause ? ` (${inner.cause.message ?? inner.cause})` : ''}`
          : '';
        throw new Failure(`calling ${methodName} at ${url} failed: ${e?.message ?? e}${cause}`);
      }
      out.error = { code: e.code, message: e.message };
      if (e.data !== undefined) out.error.data = e.data;
      const declared = (method.errors ?? []).map((x, i) => deref(doc, x, `${found.at}/errors/${i}`).value?.code);
      out.errorDeclared = declared.includes(e.code);
      const f = new Failure(`${methodName} answered error ${e.code}: ${e.message}`, out);
      f.code = 3;
      throw f;
    }
    if (opts.check) {
      const resultDesc = deref(doc, method.result, `${found.at}/result`);
      if (resultDesc.value.schema !== undefined) {
        const validate = v.at(`${resultDesc.at}/schema`);
        out.resultValid = validate(out.result);
        if (!out.resultValid) {
          out.resultErrors = validate.errors;
          throw new Failure(`the result of ${methodName} does not match its schema: ${JSON.stringify(validate.errors)}`, out);
        }
      }
    }
    return out;
  } finally {
    client.close();
  }
}, { exit: true });
