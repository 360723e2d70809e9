// BytePattern must find what Buffer.indexOf finds, wherever its search starts (its anchor).
import { describe, expect, it } from 'vitest';
import { BytePattern } from './byte-pattern.js';
import { rng } from '../testserver/seeded-random.js';

describe('BytePattern', () => {
  const cases: { name: string; pattern: string; text: string; from?: number; want: number }[] = [
    { name: 'member present', pattern: '"volumes":', text: '{"spec":{"volumes":[]}}', want: 9 },
    { name: 'absent', pattern: '"volumes":', text: '{"spec":{"containers":[]}}', want: -1 },
    { name: 'the tail without its head first', pattern: '"volumes":', text: '{"xvolumes":1,"volumes":2}', want: 14 },
    { name: 'head cut at the buffer start', pattern: '"finalizers"', text: 'inalizers""finalizers"', want: 10 },
    { name: 'from skips an earlier match', pattern: '"a":', text: '{"a":1,"b":{"a":2}}', from: 2, want: 12 },
    { name: 'from on the match', pattern: '"a":', text: '{"a":1}', from: 1, want: 1 },
    { name: 'from past the end', pattern: '"a":', text: '{"a":1}', from: 40, want: -1 },
    { name: 'negative from as 0', pattern: '"a":', text: '{"a":1}', from: -5, want: 1 },
    { name: 'upper-case anchor', pattern: '"deletionTimestamp"', text: '{"creationTimestamp":"x","deletionTimestamp":"y"}', want: 25 },
    { name: 'pattern longer than text', pattern: '"ownerReferences"', text: 'References"', want: -1 },
    { name: 'non-letters only', pattern: '":{', text: 'a":{b', want: 1 },
    { name: 'multi-byte text', pattern: '"é":', text: '{"x":"é","é":1}', want: 10 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const text = Buffer.from(c.text, 'utf8');
      expect(new BytePattern(c.pattern).indexIn(text, c.from)).toBe(c.want);
      expect(new BytePattern(c.pattern).indexIn(text, c.from)).toBe(text.indexOf(Buffer.from(c.pattern, 'utf8'), c.from === undefined ? 0 : Math.max(c.from, 0)));
    });
  }

  it('agrees with Buffer.indexOf on seeded random texts', () => {
    // Small alphabets make near misses, overlaps and matches at both ends common.
    const next = rng(0x2545f491);
    const rand = (n: number) => Math.floor(next() * n);
    const alphabet = ['"', ':', 'a', 'b', 'A', 'z', '{'];
    const word = (len: number) => Array.from({ length: len }, () => alphabet[rand(alphabet.length)]).join('');
    for (let round = 0; round < 5000; round++) {
      const pattern = word(1 + rand(5));
      const text = Buffer.from(word(rand(40)), 'utf8');
      const from = rand(45) - 2;
      const p = new BytePattern(pattern);
      expect(p.indexIn(text, from), `${pattern} in ${text.toString()} from ${from}`).toBe(text.indexOf(Buffer.from(pattern), Math.max(from, 0)));
      expect(p.in(new Uint8Array(text))).toBe(text.includes(Buffer.from(pattern)));
    }
  });

  it('refuses an empty pattern', () => {
    expect(() => new BytePattern('')).toThrow();
  });
});
