import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { errors, type StatusError } from '../apierrors/status.js';
import type { Env } from './context.js';
import { errorResponse, warningHeader } from './respond.js';

/** The error answered by a chain that collected `warnings` first, as a client reads it. */
async function answered(err: StatusError, warnings: string[]): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const app = new Hono<Env>();
  app.get('*', (c) => {
    c.set('warnings', warnings);
    return errorResponse(c, err);
  });
  const res = await app.request('/x');
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
}

describe('errorResponse', () => {
  it.each<[string, StatusError, string[], Record<string, string>]>([
    ['a plain error', errors.badRequest('nope'), [], {}],
    ['Retry-After from the Status details', errors.tooManyRequests('slow down', 3), [], { 'retry-after': '3' }],
    ['every warning, on one line as a Headers object joins them', errors.badRequest('nope'), [warningHeader('a'), warningHeader('b "c"')], { warning: '299 - "a", 299 - "b \\"c\\""' }],
  ])('%s', async (_name, err, warnings, extra) => {
    const { status, headers, body } = await answered(err, warnings);
    expect(status).toBe(err.status.code);
    expect(headers).toEqual({ 'cache-control': 'no-cache, private', 'content-type': 'application/json', ...extra });
    // Compact JSON with Go's trailing newline, the Status's own fields.
    expect(body.endsWith('}\n')).toBe(true);
    expect(JSON.parse(body)).toMatchObject({ kind: 'Status', status: 'Failure', code: err.status.code, message: err.status.message });
  });
});
