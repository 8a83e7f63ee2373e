// openrpc-doc.mjs: what the openrpc-*.mjs scripts share: reading an OpenRPC
// document from a file, refusing every $ref that is not internal ("#/..."),
// and validating and dereferencing it with the real
// @open-rpc/schema-utils-js, offline.
//
// schema-utils-js resolves a $ref that does not start with "#" as a file path
// first and then as an http(s) URL it fetches; the scripts are run by tests
// on machines without the internet, so such a document is refused here,
// before the library sees it, with the refs named.
import fs from 'node:fs';
import schemaUtils from '@open-rpc/schema-utils-js';
// makeCustomResolver is not re-exported by the package's index.
import parseModule from '@open-rpc/schema-utils-js/build/parse-open-rpc-document.js';

const { parseOpenRPCDocument, dereferenceDocument, validateOpenRPCDocument, OpenRPCDocumentValidationError } = schemaUtils;
const { makeCustomResolver } = parseModule;

// Failure is an error whose message is meant for stderr as it is; report, if
// set, is printed on stdout as the script's JSON output.
export class Failure extends Error {
  constructor(message, report) {
    super(message);
    this.report = report;
  }
}

// main runs f, prints what it returns as one JSON line on stdout and exits 0;
// a Failure prints its report (if any) on stdout and `NAME: message` on
// stderr and exits with its code (default 1); anything else thrown prints
// its stack and exits 1. With exit set, the process exits once stdout and
// stderr are written, whatever is left waiting (an HTTP request that timed
// out keeps its socket open).
export async function main(name, f, { exit = false } = {}) {
  let out = '';
  let err = '';
  let code = 0;
  try {
    const v = await f();
    if (v !== undefined) out = JSON.stringify(v) + '\n';
  } catch (e) {
    if (e instanceof Failure) {
      if (e.report !== undefined) out = JSON.stringify(e.report) + '\n';
      err = `${name}: ${e.message}\n`;
      code = e.code ?? 1;
    } else {
      err = `${name}: ${e?.stack ?? e}\n`;
      code = 1;
    }
  }
  process.exitCode = code;
  await Promise.all([
    new Promise((resolve) => (out ? process.stdout.write(out, resolve) : resolve())),
    new Promise((resolve) => (err ? process.stderr.write(err, resolve) : resolve())),
  ]);
  if (exit) process.exit(code);
}

// usage fails with exit status 2.
export function usage(text) {
  const f = new Failure(`usage: ${text}`);
  f.code = 2;
  return f;
}

// readJSON reads and parses one JSON file, failing with the file's name.
export function readJSON(path) {
  let text;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (e) {
    throw new Failure(`cannot read ${path}: ${e.message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Failure(`${path} is not JSON: ${e.message}`);
  }
}

// refsOf lists every {"$ref": ...} of v as [pointer, ref] pairs. It follows
// no object twice, so the cycles of a dereferenced recursive schema end.
export function refsOf(v, at = '', seen = new Set(), out = []) {
  if (v === null || typeof v !== 'object' || seen.has(v)) return out;
  seen.add(v);
  if (!Array.isArray(v) && typeof v.$ref === 'string') out.push([at, v.$ref]);
  for (const [k, x] of Object.entries(v)) {
    refsOf(x, `${at}/${String(k).replaceAll('~', '~0').replaceAll('/', '~1')}`, seen, out);
  }
  return out;
}

// hasCycle reports whether v refers to itself (a dereferenced recursive
// schema does: JSON.stringify fails on it).
export function hasCycle(v, path = new Set()) {
  if (v === null || typeof v !== 'object') return false;
  if (path.has(v)) return true;
  path.add(v);
  for (const x of Object.values(v)) if (hasCycle(x, path)) return true;
  path.delete(v);
  return false;
}

// refuseExternalRefs fails if doc has a $ref other than "#..." (a file path
// or URL, which schema-utils-js would read or fetch).
export function refuseExternalRefs(doc, path) {
  const external = refsOf(doc).filter(([, ref]) => !ref.startsWith('#'));
  if (external.length > 0) {
    const list = external.slice(0, 10).map(([at, ref]) => `${at || '/'}: ${JSON.stringify(ref)}`);
    throw new Failure(
      `${path} has ${external.length} $ref(s) that are not internal ("#/..."); schema-utils-js would read them as files or fetch them, so they are refused: ${list.join('; ')}`,
      { valid: false, stage: 'refs', errors: external.map(([at, ref]) => ({ instancePath: at, $ref: ref, message: 'not an internal $ref' })) },
    );
  }
}

// pointerTarget resolves an internal "#/..." ref against doc, or returns
// undefined.
export function pointerTarget(doc, ref) {
  if (ref === '#') return doc;
  if (!ref.startsWith('#/')) return undefined;
  let v = doc;
  for (const part of ref.slice(2).split('/')) {
    let k;
    try {
      k = decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~');
    } catch {
      return undefined;
    }
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, k)) return undefined;
    v = v[k];
  }
  return v;
}

// refCycle returns the first cycle of internal $refs in doc (a recursive
// schema: ["#/components/schemas/Tree", "#/components/schemas/Tree"], or
// A, B, A), or null. A ref to "#" alone is left out: it is a schema's own
// root when schema-utils-js dereferences, which it handles.
export function refCycle(doc) {
  const edges = new Map();
  const next = (ref) => {
    if (!edges.has(ref)) {
      const t = pointerTarget(doc, ref);
      const out = t === undefined ? [] : refsOf(t).map(([, r]) => r).filter((r) => r.startsWith('#/'));
      edges.set(ref, [...new Set(out)]);
    }
    return edges.get(ref);
  };
  const state = new Map(); // 1: on the path, 2: done
  const path = [];
  const visit = (ref) => {
    if (state.get(ref) === 2) return null;
    if (state.get(ref) === 1) return [...path.slice(path.indexOf(ref)), ref];
    state.set(ref, 1);
    path.push(ref);
    for (const r of next(ref)) {
      const c = visit(r);
      if (c) return c;
    }
    path.pop();
    state.set(ref, 2);
    return null;
  };
  for (const [, ref] of refsOf(doc)) {
    if (!ref.startsWith('#/')) continue;
    const c = visit(ref);
    if (c) return c;
  }
  return null;
}

// refuseRecursion fails if doc has a recursive schema: schema-utils-js
// 2.2.1 dereferences with @json-schema-tools/dereferencer 1.6.3, which
// never ends on one (it grows until the heap runs out: 4 GB in a minute),
// so the document is refused before it is dereferenced.
export function refuseRecursion(doc, path) {
  const cycle = refCycle(doc);
  if (cycle) {
    throw new Failure(
      `${path} has a recursive schema (${cycle.join(' -> ')}); schema-utils-js 2.2.1 cannot dereference it (@json-schema-tools/dereferencer 1.6.3 runs out of memory), so it is refused`,
      { valid: false, stage: 'recursion', errors: [{ cycle, message: 'recursive $ref: schema-utils-js cannot dereference it' }] },
    );
  }
}

// offlineResolver is the reference resolver given to schema-utils-js for the
// document's own $refs (methods, content descriptors, errors, examples): an
// internal "#/..." ref is resolved against the document; any other fails
// instead of being read from disk or fetched.
export const offlineResolver = makeCustomResolver({
  file: async (uri) => {
    throw new Error(`external $ref ${uri} refused (offline)`);
  },
});

// validationErrors turns a schema-utils-js OpenRPCDocumentValidationError
// (whose message embeds ajv's errors as JSON) back into ajv's error objects.
export function validationErrors(err) {
  const m = /The errors found are as follows:\n([\s\S]*)$/.exec(err?.message ?? '');
  if (m) {
    try {
      return JSON.parse(m[1]);
    } catch {
      /* fall through */
    }
  }
  return [{ message: String(err?.message ?? err) }];
}

const clone = (v) => structuredClone(v);

// loadDocument reads the document at path and returns {raw, doc}: raw as
// read, doc validated, dereferenced (every method's params, result, errors,
// examples and tags, and the schemas in them, with the components' objects in
// place of the $refs) and validated again, by parseOpenRPCDocument. It fails
// with the stage and ajv's errors as its report.
export async function loadDocument(path) {
  const raw = readJSON(path);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new Failure(`${path}: an OpenRPC document is a JSON object`, { valid: false, stage: 'parse', errors: [{ message: 'not an object' }] });
  }
  refuseExternalRefs(raw, path);
  refuseRecursion(raw, path);
  let doc;
  try {
    doc = await parseOpenRPCDocument(clone(raw), { dereference: true, validate: true, resolver: offlineResolver });
  } catch (e) {
    // Neither error class of schema-utils-js extends Error, and the
    // validation error's name says "OpenRPCDocumentDereferencingError".
    const isValidation = e instanceof OpenRPCDocumentValidationError;
    throw new Failure(`${path}: parseOpenRPCDocument failed: ${e?.message ?? e}`, {
      valid: false,
      stage: isValidation ? 'validate' : 'dereference',
      errors: isValidation ? validationErrors(e) : [{ message: String(e?.message ?? e) }],
    });
  }
  return { raw, doc };
}

export { parseOpenRPCDocument, dereferenceDocument, validateOpenRPCDocument, OpenRPCDocumentValidationError, clone };
