// ajv-validate.mjs: validates JSON values, one per line of stdin, against a
// JSON Schema with ajv 8 (draft-07, strict mode off, allErrors off, formats
// from ajv-formats), in one process, so that a test can check thousands of
// frames at once.
//
//   node ajv-validate.mjs SCHEMA.json                     # the file is the schema
//   node ajv-validate.mjs DOC.json --pointer /x-frames/params/initialize
//        # the schema at that JSON pointer of DOC.json (an OpenRPC document, say);
//        # its "#/components/schemas/X" refs are resolved against DOC.json
//   node ajv-validate.mjs SCHEMA.json --ref-root DOC.json
//        # SCHEMA.json is a fragment cut out of DOC.json: its "#/..." refs are
//        # resolved against DOC.json
//
// With --pointer, the whole document is added to ajv under an $id and
// {"$ref": "<id>#<pointer>"} is compiled (the pointer's tokens are
// percent-encoded: pass it as a plain JSON pointer, "/" in a name as ~1);
// with --ref-root, the fragment is put into a copy of DOC.json at
// /x-linerpc-ajv-target and compiled the same way. Nothing is dereferenced,
// read or fetched beyond the files named; recursive schemas are fine.
//
// Output: for each non-empty line n of stdin (counting from 1), one JSON line
// on stdout, in order, written as soon as the line is read:
//   {"line":n,"valid":true,"errors":[]}
//   {"line":n,"valid":false,"errors":[{"instancePath":"/params/x","schemaPath":"...","keyword":"type","params":{...},"message":"must be integer"}]}
//   {"line":n,"valid":false,"errors":[{"instancePath":"","keyword":"json","message":"not JSON: ..."}]}
// (allErrors off: ajv stops at the first error, so errors has one entry.)
// Exit 0 when every value was valid, 1 when some were not (stderr counts
// them and names the first lines), 2 on usage or a schema that does not
// compile (a message on stderr, nothing on stdout).
//
// The caller must read stdout while it writes stdin: the results are written
// as the lines come, and a pipe holds only so much.
import fs from 'node:fs';
import readline from 'node:readline';
import { newAjv, docValidator } from './openrpc-ajv.mjs';

const USAGE = 'usage: ajv-validate.mjs SCHEMA.json [--ref-root DOC.json] | ajv-validate.mjs DOC.json --pointer JSON-POINTER';
const TARGET = '/x-linerpc-ajv-target';

function die(msg) {
  process.stderr.write(`ajv-validate: ${msg}\n`);
  process.exit(2);
}

function readJSON(path) {
  let text;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (e) {
    die(`cannot read ${path}: ${e.message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    die(`${path} is not JSON: ${e.message}`);
  }
}

const args = process.argv.slice(2);
let file;
let pointer;
let refRoot;
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--pointer' && i + 1 < args.length) pointer = args[++i];
  else if (a === '--ref-root' && i + 1 < args.length) refRoot = args[++i];
  else if (a.startsWith('--') || file !== undefined) die(USAGE);
  else file = a;
}
if (file === undefined || (pointer !== undefined && refRoot !== undefined)) die(USAGE);

let validate;
try {
  const schema = readJSON(file);
  if (pointer !== undefined) {
    validate = docValidator(schema).at(pointer);
  } else if (refRoot !== undefined) {
    const doc = readJSON(refRoot);
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) die(`${refRoot}: a --ref-root document is a JSON object`);
    validate = docValidator({ ...doc, [TARGET.slice(1)]: schema }).at(TARGET);
  } else {
    validate = newAjv().compile(schema);
  }
} catch (e) {
  die(`the schema does not compile: ${e.message}`);
}

let n = 0;
let invalid = 0;
const firstInvalid = [];
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  n++;
  if (line.trim() === '') continue;
  let out;
  let value;
  let parsed = true;
  try {
    value = JSON.parse(line);
  } catch (e) {
    parsed = false;
    out = { line: n, valid: false, errors: [{ instancePath: '', keyword: 'json', message: `not JSON: ${e.message}` }] };
  }
  if (parsed) {
    const valid = validate(value);
    out = { line: n, valid, errors: valid ? [] : validate.errors };
  }
  if (!out.valid) {
    invalid++;
    if (firstInvalid.length < 10) firstInvalid.push(n);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}
if (invalid > 0) {
  process.stderr.write(`ajv-validate: ${invalid} value(s) invalid, on lines ${firstInvalid.join(', ')}${invalid > firstInvalid.length ? ', …' : ''}\n`);
  process.exitCode = 1;
}
