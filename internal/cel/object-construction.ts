// internal/cel/object-construction owns CEL message construction for the mutation expressions
// of MutatingAdmissionPolicy, which the engine (@marcbachmann/cel-js) does not parse:
// `Object{spec: Object.spec{replicas: 3}}` and `JSONPatch{op: "add", path: "/x", value: 1}`.
// The source is rewritten, lexer-aware (string literals, raw and triple-quoted strings and
// comments are never touched), into calls of registered functions over map literals:
// `__object("Object", {"spec": __object("Object.spec", {"replicas": 3})})`. Only the type names
// upstream's mutation environment declares are accepted: `Object`, `Object.<field>...` and
// `JSONPatch`; any other `Name{` stays as written, so the engine reports it. Error messages keep
// the original source (the caller quotes it). `jsonpatch.escapeKey(string)` is registered with
// the construction functions (upstream's JSONPatch library). Imports: cel/lib/common.

import { type Environment, fn } from './lib/common.js';

class JSONPatchNamespace {}

/** The functions a rewritten expression calls. */
export const OBJECT_FN = '__object';
export const JSONPATCH_FN = '__jsonpatch';

const supporting = new WeakSet<Environment>();

/** Whether `env` has the construction functions (compileExpression then rewrites sources). */
export function supportsObjectConstruction(env: Environment): boolean {
  return supporting.has(env);
}

/** The JSON Patch operations upstream's JSONPatch type accepts. */
export const JSONPATCH_OPS = ['add', 'remove', 'replace', 'move', 'copy', 'test'] as const;

/**
 * Registers `__object`, `__jsonpatch` and `jsonpatch.escapeKey` on `env`. An Object value is the
 * map of its fields; a JSONPatch value is the map of its fields (op, path, value, from), with
 * the field names checked when it is built.
 */
export function registerObjectConstruction(env: Environment): Environment {
  env.registerFunction(`${OBJECT_FN}(string, map): map`, (_type: string, fields: Record<string, unknown>) => fields);
  env.registerFunction(`${JSONPATCH_FN}(map): map`, (fields: Record<string, unknown>) => {
    for (const k of Object.keys(fields)) {
      if (!['op', 'path', 'value', 'from'].includes(k)) throw new Error(`JSONPatch has no field "${k}" (op, path, value, from)`);
    }
    return fields;
  });
  // `jsonpatch` is a constant of a namespace type, as the sets library declares `sets`.
  env.registerType('kubernetes.JSONPatchNamespace', JSONPatchNamespace);
  env.registerConstant('jsonpatch', 'kubernetes.JSONPatchNamespace', new JSONPatchNamespace());
  // RFC 6901: `~` first, then `/`.
  fn(env, 'kubernetes.JSONPatchNamespace.escapeKey(string): string', (_n: unknown, k: string) => k.replaceAll('~', '~0').replaceAll('/', '~1'), 'jsonpatch.escapeKey');
  supporting.add(env);
  return env;
}

interface Token {
  kind: 'ident' | 'string' | 'space' | 'punct' | 'other';
  text: string;
}

const IDENT = /[_a-zA-Z][_a-zA-Z0-9]*/y;

/** Splits CEL source into tokens precise enough to find `Name{` and `field:` outside strings. */
export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    // Comments run to the end of the line.
    if (c === '/' && src[i + 1] === '/') {
      const end = src.indexOf('\n', i);
      const stop = end < 0 ? src.length : end;
      out.push({ kind: 'space', text: src.slice(i, stop) });
      i = stop;
      continue;
    }
    if (/\s/.test(c)) {
      let j = i;
      while (j < src.length && /\s/.test(src[j]!)) j++;
      out.push({ kind: 'space', text: src.slice(i, j) });
      i = j;
      continue;
    }
    // String and bytes literals, with r/b prefixes and triple quotes.
    const prefix = /^[rRbB]{0,2}(?="""|'''|"|')/.exec(src.slice(i, i + 5));
    if ((c === '"' || c === "'" || (prefix && prefix[0].length > 0)) && prefix) {
      const start = i;
      const raw = /r/i.test(prefix[0]);
      i += prefix[0].length;
      const quote = src.startsWith(src[i]!.repeat(3), i) ? src[i]!.repeat(3) : src[i]!;
      i += quote.length;
      while (i < src.length && !src.startsWith(quote, i)) {
        if (!raw && src[i] === '\\') i++;
        i++;
      }
      i += quote.length;
      out.push({ kind: 'string', text: src.slice(start, Math.min(i, src.length)) });
      continue;
    }
    IDENT.lastIndex = i;
    const m = IDENT.exec(src);
    if (m) {
      out.push({ kind: 'ident', text: m[0] });
      i += m[0].length;
      continue;
    }
    if ('{}()[],:.?'.includes(c)) {
      out.push({ kind: 'punct', text: c });
      i++;
      continue;
    }
    out.push({ kind: 'other', text: c });
    i++;
  }
  return out;
}

/**
 * The source with every `Object...{…}` / `JSONPatch{…}` construction turned into a function call
 * over a map literal; unchanged (the same string) when it has none.
 */
export function rewriteObjectConstruction(src: string): string {
  return rewrite(src);
}

/** A field an `Object…{…}` construction sets: the type name (`Object.spec`) and the field. */
export interface ConstructedField {
  type: string;
  field: string;
}

/** Every field set by an `Object…{…}` construction of `src`, for type checking against a schema. */
export function constructedFields(src: string): ConstructedField[] {
  const out: ConstructedField[] = [];
  rewrite(src, (type, field) => out.push({ type, field }));
  return out;
}

function rewrite(src: string, onField?: (type: string, field: string) => void): string {
  if (!/\b(Object|JSONPatch)\b/.test(src)) return src;
  const toks = tokenize(src);
  const next = (i: number): number => {
    let j = i;
    while (j < toks.length && toks[j]!.kind === 'space') j++;
    return j;
  };
  const prev = (i: number): Token | undefined => {
    let j = i - 1;
    while (j >= 0 && toks[j]!.kind === 'space') j--;
    return j >= 0 ? toks[j] : undefined;
  };
  // What each open bracket was: a construction's braces close with `})`.
  const stack: Array<'msg' | 'other'> = [];
  // The type name of each open construction, innermost last.
  const types: string[] = [];
  let atEntryStart = false;
  let out = '';
  let changed = false;
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.kind === 'ident' && (t.text === 'Object' || t.text === 'JSONPatch') && prev(i)?.text !== '.') {
      // The type name: Object(.field)* or JSONPatch, then `{`.
      let j = i;
      const parts = [t.text];
      if (t.text === 'Object') {
        for (;;) {
          const dot = next(j + 1);
          const name = next(dot + 1);
          if (toks[dot]?.text !== '.' || toks[name]?.kind !== 'ident') break;
          parts.push(toks[name]!.text);
          j = name;
        }
      }
      const brace = next(j + 1);
      if (toks[brace]?.text === '{') {
        const type = parts.join('.');
        out += type === 'JSONPatch' ? `${JSONPATCH_FN}({` : `${OBJECT_FN}(${JSON.stringify(type)}, {`;
        stack.push('msg');
        types.push(type);
        atEntryStart = true;
        changed = true;
        i = brace;
        continue;
      }
    }
    if (t.kind === 'space') {
      out += t.text;
      continue;
    }
    if (atEntryStart && stack[stack.length - 1] === 'msg' && t.kind === 'ident' && toks[next(i + 1)]?.text === ':') {
      out += JSON.stringify(t.text);
      onField?.(types[types.length - 1]!, t.text);
      atEntryStart = false;
      continue;
    }
    atEntryStart = false;
    if (t.text === '{' || t.text === '(' || t.text === '[') stack.push('other');
    else if (t.text === '}' || t.text === ')' || t.text === ']') {
      const top = stack.pop();
      if (top === 'msg' && t.text === '}') {
        types.pop();
        out += '})';
        continue;
      }
    } else if (t.text === ',' && stack[stack.length - 1] === 'msg') atEntryStart = true;
    out += t.text;
  }
  return changed ? out : src;
}
