// bench/load/request-template owns turning a RequestTemplate into the bytes of one request:
// placeholders are split out once, so each request is a join, not a regex pass.
// Imports: load/protocol.

import { wallClockMs, type RequestTemplate } from './protocol.js';

export interface RenderedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

type Piece = string | 'n' | 'm' | 'ts';
const PLACEHOLDER = /\{(n|m|ts)\}/;

function compile(text: string): Piece[] {
  const pieces: Piece[] = [];
  let rest = text;
  for (let m = PLACEHOLDER.exec(rest); m; m = PLACEHOLDER.exec(rest)) {
    // Literal text is stored wrapped so it can never collide with a placeholder name.
    if (m.index > 0) pieces.push(`=${rest.slice(0, m.index)}`);
    pieces.push(m[1] as Piece);
    rest = rest.slice(m.index + m[0].length);
  }
  if (rest) pieces.push(`=${rest}`);
  return pieces;
}

function fill(pieces: Piece[], n: number, modulo: number): string {
  let out = '';
  for (const p of pieces) {
    if (p === 'n') out += n;
    else if (p === 'm') out += n % modulo;
    else if (p === 'ts') out += wallClockMs().toFixed(3);
    else out += p.slice(1);
  }
  return out;
}

/** Compiles a template; the returned function renders request number `n`. */
export function compileTemplate(t: RequestTemplate, modulo = 1): (n: number) => RenderedRequest {
  const path = compile(t.path);
  const baseHeaders = { ...t.headers };
  const body = t.body;
  let renderBody: (n: number) => Buffer | undefined = () => undefined;
  if (body && 'template' in body) {
    const pieces = compile(body.template);
    renderBody = (n) => Buffer.from(fill(pieces, n, modulo));
    baseHeaders['content-type'] ??= 'application/json';
  } else if (body) {
    const key = compile(body.etcdKey);
    const value = body.etcdValue === undefined ? undefined : Buffer.from(body.etcdValue).toString('base64');
    renderBody = (n) => {
      const k = Buffer.from(fill(key, n, modulo)).toString('base64');
      return Buffer.from(value === undefined ? `{"key":"${k}"}` : `{"key":"${k}","value":"${value}"}`);
    };
    baseHeaders['content-type'] ??= 'application/json';
  }
  return (n) => {
    const payload = renderBody(n);
    const headers = payload ? { ...baseHeaders, 'content-length': String(payload.length) } : baseHeaders;
    return { method: t.method, path: fill(path, n, modulo), headers, body: payload };
  };
}

/** Renders a key template (etcd jobs): same placeholders as paths. */
export function compileKey(template: string, modulo = 1): (n: number) => string {
  const pieces = compile(template);
  return (n) => fill(pieces, n, modulo);
}
