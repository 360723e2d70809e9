// The benchmark's key-value state machine: put bodies are validated before they become
// commands (bad input never reaches apply()), and snapshots encoded in slices restore the
// same map, whatever is applied while the encoding is under way; applied in batches, the map
// and the results are those of applying one command at a time.
import { describe, expect, it } from 'vitest';
import { BatchingKvStateMachine, KvStateMachine, encodeKvCommand, kvPutCommandFromJson } from './kv-state-machine.js';

const enc = new TextEncoder();

describe('kvPutCommandFromJson', () => {
  const cases: [string, string, boolean][] = [
    ['key and value', '{"key":"k","value":"v"}', true],
    ['with op put', '{"op":"put","key":"k","value":"v"}', true],
    ['another op', '{"op":"delete","key":"k","value":"v"}', false],
    ['value not a string', '{"key":"k","value":1}', false],
    ['no key', '{"value":"v"}', false],
    ['not JSON', '{"key":', false],
    ['null', 'null', false],
    ['an array', '["k","v"]', false],
  ];
  it.each(cases)('%s', (_name, body, ok) => {
    const command = kvPutCommandFromJson(enc.encode(body));
    expect(command !== null).toBe(ok);
    if (!command) return;
    const sm = new KvStateMachine();
    sm.apply({ index: 1, term: 1, data: command });
    expect(sm.get('k')).toBe('v');
  });
});

describe('KvStateMachine snapshots', () => {
  it('captures the state when called and restores it, though encoded in slices', async () => {
    const sm = new KvStateMachine();
    let index = 0;
    for (let i = 0; i < 5000; i++) sm.apply({ index: ++index, term: 1, data: encodeKvCommand({ op: 'put', key: `k${i}`, value: `v${i}` }) });
    const image = sm.snapshot();
    // Applied while the image is being encoded: not in it.
    sm.apply({ index: ++index, term: 1, data: encodeKvCommand({ op: 'put', key: 'k0', value: 'changed' }) });
    const restored = new KvStateMachine();
    restored.restore(await image);
    expect(restored.data.size).toBe(5000);
    expect(restored.get('k0')).toBe('v0');
    expect(restored.get('k4999')).toBe('v4999');
    expect(restored.lastApplied).toBe(5000);
  });
});

describe('BatchingKvStateMachine', () => {
  it('applies a batch as apply() would one command at a time, one result per command', () => {
    const commands = ['1', '2', '3'].map((v, i) => ({ index: i + 2, term: 1, data: encodeKvCommand({ op: 'put', key: 'k', value: v }) }));
    const single = new KvStateMachine();
    const expected = commands.map((c) => single.apply(c));
    const batched = new BatchingKvStateMachine();
    expect(batched.applyBatch(commands)).toEqual(expected);
    expect(batched.applyBatch(commands.map((c) => ({ ...c, index: c.index + 3 })))).toEqual(['3', '1', '2']);
    expect(batched.get('k')).toBe('3');
    expect(batched.batches).toEqual([
      [2, 3, 4],
      [5, 6, 7],
    ]);
  });
});

