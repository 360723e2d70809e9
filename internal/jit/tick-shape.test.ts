import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keepTickShape } from './tick-shape.js';

describe('keepTickShape', () => {
  it('holds one nextTick queue entry, the same one on every call', async () => {
    const entry = await keepTickShape();
    const symbols = Object.getOwnPropertySymbols(entry).map((s) => s.description);
    // The shape of Node 20's tick entries: if Node changes it, the workaround needs a new look.
    expect(symbols).toEqual(['async_id_symbol', 'trigger_async_id_symbol']);
    expect(Object.keys(entry)).toEqual(['callback', 'args']);
    expect(await keepTickShape()).toBe(entry);
  });

  it("keeps the entries' hidden class through a low-memory collection, which frees it otherwise", () => {
    // A fresh node runs ticks, a low-memory collection (what the server runs once ready), then
    // ticks again. V8's IC log records each hidden class that the tick loop's read of an entry's
    // async id meets: a class freed by the collection (or by any earlier one) shows as another.
    const script = `
      const { executionAsyncResource } = require('node:async_hooks');
      const inspector = require('node:inspector');
      const tick = () => new Promise((r) => process.nextTick(() => r(executionAsyncResource())));
      const ticks = async () => { for (let i = 0; i < 2000; i++) process.nextTick(() => {}); await new Promise((r) => setImmediate(r)); };
      const collect = () => new Promise((resolve) => {
        const s = new inspector.Session();
        s.connect();
        s.post('HeapProfiler.collectGarbage', () => setImmediate(() => { s.disconnect(); resolve(); }));
      });
      (async () => {
        globalThis.kept = process.argv[1] === 'keep' ? await tick() : undefined;
        await ticks();
        await collect();
        await ticks();
      })();`;
    const dir = mkdtempSync(join(tmpdir(), 'tick-shape-'));
    try {
      const classesSeen = (mode: string) => {
        const log = join(dir, `${mode}.log`);
        execFileSync(process.execPath, ['--log-ic', `--logfile=${log}`, '--no-logfile-per-isolate', '-e', script, mode]);
        const loads = readFileSync(log, 'latin1')
          .split('\n')
          .filter((l) => l.startsWith('KeyedLoadIC,') && l.includes('symbol("async_id_symbol"'));
        return new Set(loads.map((l) => l.split(',')[7])).size;
      };
      expect(classesSeen('none')).toBeGreaterThan(1);
      expect(classesSeen('keep')).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
