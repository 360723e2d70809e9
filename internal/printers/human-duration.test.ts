import { describe, expect, it } from 'vitest';
import { humanDuration, rfc3339, timeSince } from './human-duration.js';

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;
const y = 365 * d;

describe('humanDuration (upstream HumanDuration)', () => {
  const cases: Array<[number, string]> = [
    [-2 * s, '<invalid>'],
    [-1999, '0s'], // -1.999 s truncates to -1 s: within the tolerated skew
    [-1 * s, '0s'],
    [-500, '0s'],
    [0, '0s'],
    [999, '0s'],
    [5 * s, '5s'],
    [59 * s, '59s'],
    [60 * s, '60s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [2 * m + 1 * s, '2m1s'],
    [3 * m + 4 * s, '3m4s'],
    [9 * m + 59 * s, '9m59s'],
    [10 * m, '10m'],
    [10 * m + 30 * s, '10m'],
    [179 * m, '179m'],
    [3 * h, '3h'],
    [3 * h + 1 * m, '3h1m'],
    [7 * h + 59 * m, '7h59m'],
    [8 * h, '8h'],
    [47 * h + 59 * m, '47h'],
    [48 * h, '2d'],
    [2 * d + 5 * h, '2d5h'],
    [7 * d + 23 * h, '7d23h'],
    [8 * d, '8d'],
    [8 * d + 5 * h, '8d'],
    [729 * d, '729d'],
    [2 * y, '2y'],
    [2 * y + 20 * d, '2y20d'],
    [7 * y + 364 * d, '7y364d'],
    [8 * y, '8y'],
    [8 * y + 100 * d, '8y'],
    [100 * y, '100y'],
  ];
  it.each(cases)('%d ms → %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

describe('timeSince and rfc3339', () => {
  const now = new Date('2024-05-01T12:00:00Z');
  it.each([
    ['2024-05-01T11:55:00Z', '5m'],
    ['2024-05-01T11:59:58.500000Z', '1s'],
    ['2024-05-01T12:00:05Z', '<invalid>'],
    [undefined, '<unknown>'],
    ['', '<unknown>'],
    ['not a time', '<unknown>'],
    [42, '<unknown>'],
  ] as Array<[unknown, string]>)('%j → %s', (ts, text) => {
    expect(timeSince(ts, now)).toBe(text);
  });

  it('prints Created At as Go formats a metav1.Time', () => {
    expect(rfc3339('2024-05-01T12:00:00Z')).toBe('2024-05-01T12:00:00Z');
    expect(rfc3339('2024-05-01T14:00:00+02:00')).toBe('2024-05-01T12:00:00Z');
    expect(rfc3339('2024-05-01T12:00:00.750Z')).toBe('2024-05-01T12:00:00Z');
    expect(rfc3339(undefined)).toBe('0001-01-01T00:00:00Z');
  });
});
