// The checker on small hand-written histories, linearizable and not, including the classic
// register examples (stale read after a completed write, reads going back in time).
import { describe, expect, it } from 'vitest';
import { checkOperations } from './checker.js';
import { kvModel, type KvInput, type KvOperation, type KvOutput } from './kv-model.js';

let client = 0;
function op(call: number, ret: number, input: KvInput, output: KvOutput): KvOperation {
  return { clientId: client++, input, call, output, return: ret };
}
const put = (k: string, v: string) => ({ op: 'put', key: k, value: v }) as const;
const get = (k: string) => ({ op: 'get', key: k }) as const;
const cas = (k: string, e: string | null, v: string) => ({ op: 'cas', key: k, expected: e, value: v }) as const;
const check = (h: KvOperation[]) => checkOperations(kvModel, h).result;

describe('linearizability checker', () => {
  it('accepts an empty and a sequential history', () => {
    expect(check([])).toBe('ok');
    expect(check([op(0, 1, put('x', '1'), {}), op(2, 3, get('x'), { value: '1' }), op(4, 5, get('y'), { value: null })])).toBe('ok');
  });

  it('rejects a read of a value never written', () => {
    expect(check([op(0, 1, get('x'), { value: '7' })])).toBe('illegal');
  });

  it('rejects a stale read after a completed write', () => {
    // put(x=1) returned before get(x) was invoked, so the get must see 1.
    expect(check([op(0, 1, put('x', '1'), {}), op(2, 3, get('x'), { value: null })])).toBe('illegal');
  });

  it('accepts either value for a read concurrent with a write', () => {
    expect(check([op(0, 10, put('x', '1'), {}), op(2, 3, get('x'), { value: null })])).toBe('ok');
    expect(check([op(0, 10, put('x', '1'), {}), op(2, 3, get('x'), { value: '1' })])).toBe('ok');
  });

  it('rejects reads that go back in time', () => {
    // Both reads overlap the write, but once one read saw 1, a later read cannot see null.
    const h = [op(0, 10, put('x', '1'), {}), op(1, 2, get('x'), { value: '1' }), op(3, 4, get('x'), { value: null })];
    expect(check(h)).toBe('illegal');
  });

  it('orders concurrent writes consistently with the reads', () => {
    const ok = [
      op(0, 5, put('x', 'a'), {}),
      op(0, 5, put('x', 'b'), {}),
      op(6, 7, get('x'), { value: 'b' }),
      op(8, 9, get('x'), { value: 'b' }),
    ];
    expect(check(ok)).toBe('ok');
    const flipFlop = [...ok.slice(0, 3), op(8, 9, get('x'), { value: 'a' })];
    expect(check(flipFlop)).toBe('illegal');
  });

  it('checks compare-and-swap outcomes', () => {
    expect(check([op(0, 1, cas('x', null, 'a'), { swapped: true }), op(2, 3, cas('x', null, 'b'), { swapped: false })])).toBe('ok');
    // Two sequential CAS from the same expected value cannot both succeed.
    expect(check([op(0, 1, cas('x', null, 'a'), { swapped: true }), op(2, 3, cas('x', null, 'b'), { swapped: true })])).toBe('illegal');
  });

  it('lets an operation with unknown outcome take effect or not', () => {
    const pending = op(0, Infinity, put('x', '1'), { unknown: true });
    expect(check([pending, op(5, 6, get('x'), { value: '1' })])).toBe('ok');
    expect(check([pending, op(5, 6, get('x'), { value: null })])).toBe('ok');
    // ...but only after it was invoked.
    expect(check([op(10, Infinity, put('x', '1'), { unknown: true }), op(5, 6, get('x'), { value: '1' })])).toBe('illegal');
  });

  it('checks keys independently and reports the failing key', () => {
    const h = [op(0, 1, put('a', '1'), {}), op(0, 1, put('b', '1'), {}), op(2, 3, get('b'), { value: '2' }), op(2, 3, get('a'), { value: '1' })];
    const r = checkOperations(kvModel, h);
    expect(r.result).toBe('illegal');
    expect(r.failedPartition?.every((o) => o.input.key === 'b')).toBe(true);
  });

  it('handles a longer history of overlapping rounds', () => {
    // 50 rounds; in each, 4 concurrent writers and a concurrent reader that sees one of them.
    const h: KvOperation[] = [];
    for (let r = 0; r < 50; r++) {
      const t = r * 100;
      for (let w = 0; w < 4; w++) h.push(op(t + w, t + 50 + w, put('x', `r${r}w${w}`), {}));
      h.push(op(t + 10, t + 60, get('x'), { value: `r${r}w${r % 4}` }));
    }
    const r = checkOperations(kvModel, h);
    expect(r.result).toBe('ok');
    // The last read sees a value from an earlier round: impossible, every writer of this round finished first.
    const bad = [...h, op(10_000, 10_001, get('x'), { value: 'r3w1' })];
    expect(checkOperations(kvModel, bad).result).toBe('illegal');
  });
});
