// openrpc-ajv.mjs: ajv 8 as ajv-validate.mjs and openrpc-client.mjs use it:
// draft-07 (ajv's default class), strict mode off (an OpenRPC document's
// schemas may carry keywords of their own, "x-..." ones), allErrors off,
// formats from ajv-formats (without it, ajv 8 ignores "format").
//
// A schema inside a larger document (an OpenRPC document whose schemas say
// "$ref": "#/components/schemas/X") is compiled by adding the whole document
// under an $id and compiling {"$ref": "<id>#<pointer>"}: its "#/..." refs
// are then resolved against the document, recursive ones included; nothing
// is dereferenced, read or fetched.
import AjvModule from 'ajv';
import formatsModule from 'ajv-formats';

const Ajv = AjvModule.default ?? AjvModule;
const addFormats = formatsModule.default ?? formatsModule;

// DOC_ID names the document inside ajv; nothing is fetched from it (.invalid
// is a reserved name).
export const DOC_ID = 'https://linerpc.invalid/document.json';

export function newAjv() {
  const ajv = new Ajv({ strict: false, allErrors: false });
  addFormats(ajv);
  return ajv;
}

// fragment turns a JSON pointer ("/x-frames/params/session~1prompt") into a
// URI fragment: each token percent-encoded (ajv decodes it, then unescapes
// ~1 and ~0).
export function fragment(pointer) {
  if (pointer === '') return '';
  if (!pointer.startsWith('/')) throw new Error(`${JSON.stringify(pointer)} is not a JSON pointer (it starts with "/")`);
  return pointer
    .split('/')
    .map((t) => encodeURIComponent(t))
    .join('/');
}

// targetOf returns the value at pointer in doc, or undefined.
export function targetOf(doc, pointer) {
  if (pointer === '') return doc;
  let v = doc;
  for (const t of pointer.slice(1).split('/')) {
    const k = t.replaceAll('~1', '/').replaceAll('~0', '~');
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, k)) return undefined;
    v = v[k];
  }
  return v;
}

// docValidator adds doc to a new ajv under DOC_ID and returns at(pointer),
// which compiles (once per pointer) the schema at that JSON pointer of doc.
// The document itself is not checked as a schema: it is not one.
export function docValidator(doc) {
  const ajv = newAjv();
  ajv.addSchema(doc, DOC_ID, undefined, false);
  const cache = new Map();
  const at = (pointer) => {
    if (!cache.has(pointer)) {
      if (targetOf(doc, pointer) === undefined) throw new Error(`nothing at JSON pointer ${JSON.stringify(pointer)} of the document`);
      cache.set(pointer, ajv.compile({ $ref: `${DOC_ID}#${fragment(pointer)}` }));
    }
    return cache.get(pointer);
  };
  return { ajv, at };
}
