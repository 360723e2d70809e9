import { describe, it, expect } from 'vitest';
import { HealthChecks, saysShuttingDown } from './health.js';

const q = (s = '') => new URLSearchParams(s);

describe('HealthChecks', () => {
  it('answers ok, verbose lists each check with a summary, exclude marks a check', async () => {
    const h = new HealthChecks(0);
    h.add(['livez', 'readyz'], { name: 'store', check: () => {} });
    expect(await h.respond('livez', undefined, q())).toEqual({ status: 200, body: 'ok' });
    expect((await h.respond('readyz', undefined, q('verbose')))!.body).toBe(
      '[+]ping ok\n[+]log ok\n[+]shutdown ok\n[+]store ok\nreadyz check passed\n',
    );
    expect((await h.respond('livez', undefined, q('verbose&exclude=store')))!.body).toBe(
      '[+]ping ok\n[+]log ok\n[+]store excluded: ok\nlivez check passed\n',
    );
  });

  it('fails with 500 and lists the failing check; per-check paths answer alone', async () => {
    const h = new HealthChecks(0);
    h.add(['readyz'], { name: 'store', check: () => { throw new Error('closed'); } });
    const r = await h.respond('readyz', undefined, q());
    expect(r!.status).toBe(500);
    expect(r!.body).toContain('[-]store failed: reason withheld');
    expect(r!.body).toMatch(/readyz check failed\n$/);
    expect(await h.respond('readyz', 'store', q())).toEqual({ status: 500, body: 'internal server error: closed' });
    expect(await h.respond('readyz', 'ping', q())).toEqual({ status: 200, body: 'ok' });
    expect(await h.respond('readyz', 'nope', q())).toBeUndefined();
  });

  it('tells the log a failing check\'s reason once when it starts failing, and when it passes again; a check that always passed says nothing', async () => {
    const told: Array<[string, string, string | undefined]> = [];
    const h = new HealthChecks(0, Date.now, (endpoint, name, why) => told.push([endpoint, name, why]));
    let why: string | undefined = 'no leader';
    h.add(['readyz'], { name: 'raft', check: () => { if (why) throw new Error(why); } });
    h.add(['readyz'], { name: 'store', check: () => {} });
    const q = new URLSearchParams();
    await h.respond('readyz', undefined, q);
    await h.respond('readyz', undefined, q);
    why = 'applied 3 of 9';
    await h.respond('readyz', undefined, q);
    why = undefined;
    await h.respond('readyz', undefined, q);
    await h.respond('readyz', undefined, q);
    why = 'no leader';
    await h.respond('readyz', undefined, q);
    expect(told).toEqual([
      ['readyz', 'raft', 'no leader'],
      ['readyz', 'raft', undefined],
      ['readyz', 'raft', 'no leader'],
    ]);
  });

  it('says nothing of a check that has not passed yet while the start is quiet; after that, or once it passed, a failure is told', async () => {
    let now = 0;
    const told: Array<[string, string, string | undefined]> = [];
    const h = new HealthChecks(0, () => now, (endpoint, name, why) => told.push([endpoint, name, why]), 10_000);
    const hookDone = h.addStartupHook('bootstrap');
    let leader = false;
    h.add(['readyz'], { name: 'raft', check: () => { if (!leader) throw new Error('no leader'); } });
    await h.respond('readyz', undefined, q());
    now = 5_000;
    leader = true;
    await h.respond('readyz', undefined, q());
    expect(told).toEqual([]);
    // Passed once: failing again is news even inside the quiet start.
    leader = false;
    await h.respond('readyz', undefined, q());
    expect(told).toEqual([['readyz', 'raft', 'no leader']]);
    // A hook still unfinished after the quiet start is told at the next probe.
    now = 10_000;
    await h.respond('readyz', undefined, q());
    expect(told).toEqual([
      ['readyz', 'raft', 'no leader'],
      ['readyz', 'poststarthook/bootstrap', 'not finished'],
    ]);
    hookDone();
    leader = true;
    await h.respond('readyz', undefined, q());
    expect(told.slice(2)).toEqual([
      ['readyz', 'poststarthook/bootstrap', undefined],
      ['readyz', 'raft', undefined],
    ]);
  });

  it('forgives unfinished start-up hooks on /livez only during the grace period', async () => {
    let now = 0;
    const h = new HealthChecks(10_000, () => now);
    const done = h.addStartupHook('bootstrap');
    expect((await h.respond('livez', undefined, q()))!.status).toBe(200);
    expect((await h.respond('readyz', undefined, q()))!.status).toBe(500);
    now = 20_000;
    expect((await h.respond('livez', undefined, q()))!.status).toBe(500);
    done();
    expect((await h.respond('livez', undefined, q()))!.status).toBe(200);
    expect((await h.respond('readyz', 'poststarthook/bootstrap', q()))!.status).toBe(200);
  });

  it('fails /readyz at once on shutdown while /livez stays healthy', async () => {
    const h = new HealthChecks(0);
    h.beginShutdown();
    expect((await h.respond('readyz', undefined, q()))!.status).toBe(500);
    expect((await h.respond('livez', undefined, q()))!.status).toBe(200);
  });

  it('its shutdown check\'s failure is what saysShuttingDown recognises, and nothing else is', async () => {
    const h = new HealthChecks(0);
    const before = (await h.respond('readyz', 'shutdown', q()))!;
    expect(saysShuttingDown(before.status, before.body)).toBe(false);
    h.beginShutdown();
    const after = (await h.respond('readyz', 'shutdown', q()))!;
    expect(after.status).toBe(500);
    expect(saysShuttingDown(after.status, after.body)).toBe(true);
  });

  it.each([
    [200, 'ok', false],
    [404, '404 page not found', false],
    [403, 'forbidden: User "system:admin" cannot get path "/readyz/shutdown"', false],
    [429, 'Too many requests, please try again later.', false],
    [503, 'upstream connect error', false],
    [500, 'internal server error: something else failed', false],
    [500, 'internal server error: process is shutting down', true],
  ])('saysShuttingDown(%i, %j) is %s', (status, body, expected) => {
    expect(saysShuttingDown(status, body)).toBe(expected);
  });
});
