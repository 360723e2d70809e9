import { Hono, type MiddlewareHandler } from 'hono';
import { describe, expect, it } from 'vitest';
import { composeStages } from './chain.js';
import type { Env } from './context.js';

type Stage = MiddlewareHandler<Env>;

/** A stage that records its name around next() and the status it sees afterwards. */
const around =
  (name: string, log: string[]): Stage =>
  async (c, next) => {
    log.push(`${name}>`);
    await next();
    log.push(`<${name} ${c.res.status}`);
  };
const syncPass =
  (name: string, log: string[]): Stage =>
  (c, next) => {
    log.push(name);
    return next();
  };
const answer = (status: number): Stage => (c) => Promise.resolve(c.text(`answered ${status}`, status as 200));
const throwsSync: Stage = () => {
  throw new Error('thrown synchronously');
};
const rejects: Stage = async () => {
  throw new Error('rejected');
};
const shortCircuit: Stage = (c) => Promise.resolve(c.text('refused', 403));
/** Answers after next(): ignored by compose, since the handler's response is already set. */
const lateAnswer: Stage = async (c, next) => {
  await next();
  return c.text('late', 202);
};

const onError = (err: Error): Response => new Response(`error: ${err.message}`, { status: 500, headers: { 'x-error': '1' } });

/** The same stages through hono's own compose (app.use + app.all) and through composeStages. */
async function both(build: (log: string[]) => Stage[]): Promise<Array<{ status: number; body: string; log: string[] }>> {
  const out = [];
  for (const mode of ['hono', 'composeStages'] as const) {
    const log: string[] = [];
    const stages = build(log);
    const app = new Hono<Env>();
    app.onError((err) => onError(err));
    if (mode === 'hono') {
      for (const s of stages.slice(0, -1)) app.use('*', s);
      app.all('*', stages[stages.length - 1]!);
    } else {
      app.all('*', composeStages(stages, onError));
    }
    const res = await app.request('/x');
    out.push({ status: res.status, body: await res.text(), log });
  }
  return out;
}

describe('composeStages answers as hono compose does', () => {
  it.each<[string, (log: string[]) => Stage[], number]>([
    ['every stage passes to the handler', (log) => [around('a', log), syncPass('b', log), around('c', log), answer(200)], 200],
    ['a synchronous throw in the handler becomes onError at that stage', (log) => [around('a', log), syncPass('b', log), throwsSync], 500],
    ['a rejection in the handler becomes onError at that stage', (log) => [around('a', log), around('b', log), rejects], 500],
    ['a throw in a filter skips the rest', (log) => [around('a', log), throwsSync, around('c', log), answer(200)], 500],
    ['a filter answers without next()', (log) => [around('a', log), shortCircuit, around('c', log), answer(200)], 403],
    ['a response returned after next() does not replace the handler\'s', (log) => [around('a', log), lateAnswer, answer(201)], 201],
  ])('%s', async (_name, build, status) => {
    const [hono, ours] = await both(build);
    expect(ours).toEqual(hono);
    expect(ours!.status).toBe(status);
  });

  it('a thrown non-Error is no response: it rejects past the chain as in hono', async () => {
    const app = new Hono<Env>();
    app.all('*', composeStages([() => Promise.reject('not an error')], onError));
    await expect(app.request('/x')).rejects.toBe('not an error');
  });
});
