// openrpc-validate.mjs: checks an OpenRPC document with the real
// @open-rpc/schema-utils-js, offline.
//
//   node openrpc-validate.mjs DOC.json
//
// Stages, each with the library's own functions: validateOpenRPCDocument
// (the OpenRPC meta-schema of the document's "openrpc" version: 1.3 for
// 1.x, 1.4 for 1.4.x), dereferenceDocument, validateOpenRPCDocument of the
// dereferenced document, then parseOpenRPCDocument (which does all three in
// one call, as the other openrpc-*.mjs scripts and the OpenRPC tools load a
// document). A $ref that is not internal ("#/...") is refused first: the
// library would read it as a file or fetch it. A recursive schema (a cycle
// of $refs) is refused after the first stage: the library's dereferencer
// never ends on one (it runs out of memory).
//
// On success, one JSON line on stdout, exit 0:
//   {"valid":true,"openrpc":"1.3.2","title":"...","methods":4,
//    "notifications":["log"],"schemas":3,"refsLeft":[],"circular":false}
// notifications: the methods without a result; schemas: the number of
// components.schemas; refsLeft: JSON pointers under /methods where a $ref
// is still there after dereferencing (the components and x- extensions are
// not dereferenced by the library, only what the methods use); circular: the
// dereferenced document refers to itself (a recursive schema).
// On failure, one JSON line on stdout, a message on stderr, exit 1:
//   {"valid":false,"stage":"refs"|"validate"|"recursion"|"dereference"|"revalidate"|"parse","errors":[...]}
// errors are ajv's error objects (instancePath/dataPath, keyword, message,
// params) for a validation stage. Exit 2: usage.
import {
  Failure,
  main,
  usage,
  readJSON,
  refuseExternalRefs,
  refuseRecursion,
  refsOf,
  hasCycle,
  offlineResolver,
  validationErrors,
  parseOpenRPCDocument,
  dereferenceDocument,
  validateOpenRPCDocument,
  clone,
} from './openrpc-doc.mjs';

await main('openrpc-validate', async () => {
  const args = process.argv.slice(2);
  if (args.length !== 1 || args[0].startsWith('-')) throw usage('openrpc-validate.mjs DOC.json');
  const path = args[0];
  const raw = readJSON(path);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new Failure(`${path}: an OpenRPC document is a JSON object`, { valid: false, stage: 'parse', errors: [{ message: 'not an object' }] });
  }
  refuseExternalRefs(raw, path);

  const check = (stage, doc) => {
    let v;
    try {
      v = validateOpenRPCDocument(doc);
    } catch (e) {
      throw new Failure(`${path}: ${stage}: ${e.message}`, { valid: false, stage, errors: [{ message: e.message }] });
    }
    if (v !== true) {
      const errors = validationErrors(v);
      throw new Failure(`${path} is not a valid OpenRPC ${raw.openrpc} document (${stage}): ${JSON.stringify(errors)}`, { valid: false, stage, errors });
    }
  };

  check('validate', raw);
  refuseRecursion(raw, path);
  let deref;
  try {
    deref = await dereferenceDocument(clone(raw), offlineResolver);
  } catch (e) {
    throw new Failure(`${path}: dereferenceDocument failed: ${e?.message ?? e}`, {
      valid: false,
      stage: 'dereference',
      errors: [{ message: String(e?.message ?? e) }],
    });
  }
  check('revalidate', deref);
  try {
    await parseOpenRPCDocument(clone(raw), { resolver: offlineResolver });
  } catch (e) {
    throw new Failure(`${path}: parseOpenRPCDocument failed: ${e?.message ?? e}`, {
      valid: false,
      stage: 'parse',
      errors: validationErrors(e),
    });
  }

  return {
    valid: true,
    openrpc: raw.openrpc,
    title: raw.info?.title,
    methods: deref.methods.length,
    notifications: deref.methods.filter((m) => m.result === undefined).map((m) => m.name),
    schemas: Object.keys(raw.components?.schemas ?? {}).length,
    refsLeft: refsOf(deref.methods, '/methods').map(([at]) => at),
    circular: hasCycle(deref),
  };
});
