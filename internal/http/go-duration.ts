// internal/http/go-duration owns reading a Go duration string ("1m30s", "-5s", "1.5h"), as
// Go's time.ParseDuration does, with its error messages: the `timeout` query parameter is
// one (upstream's request_deadline.go parses it so and refuses what does not parse).
// Imports: none.

const UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n, // U+00B5
  'μs': 1_000n, // U+03BC
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const MAX = (1n << 63n) - 1n;

export type GoDuration = { ok: true; nanoseconds: bigint } | { ok: false; error: string };

/** Go's strconv.Quote for the strings this sees (ASCII and printable text). */
const quote = (s: string): string => JSON.stringify(s);

/** Parses a Go duration; the error text is Go's (`time: invalid duration "x"`, ...). */
export function parseGoDuration(text: string): GoDuration {
  const orig = text;
  const invalid = (): GoDuration => ({ ok: false, error: `time: invalid duration ${quote(orig)}` });
  let s = text;
  let negative = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return { ok: true, nanoseconds: 0n };
  if (s === '') return invalid();
  let total = 0n;
  while (s !== '') {
    // The number: digits, optionally a fraction.
    const m = /^(\d*)(?:\.(\d*))?/.exec(s)!;
    const whole = m[1] ?? '';
    const frac = m[2];
    if (whole === '' && (frac === undefined || frac === '')) return invalid();
    s = s.slice(m[0].length);
    const unitMatch = /^[^0-9.]+/.exec(s);
    if (!unitMatch) return { ok: false, error: `time: missing unit in duration ${quote(orig)}` };
    const unitText = unitMatch[0];
    const unit = UNITS[unitText];
    if (unit === undefined) return { ok: false, error: `time: unknown unit ${quote(unitText)} in duration ${quote(orig)}` };
    s = s.slice(unitText.length);
    const v = whole === '' ? 0n : BigInt(whole);
    if (v > MAX / unit) return invalid();
    let part = v * unit;
    if (frac) {
      // Go keeps the fraction's digits as long as they fit, then scales by the unit.
      const scaled = (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
      part += scaled;
    }
    total += part;
    if (total > MAX) return invalid();
  }
  return { ok: true, nanoseconds: negative ? -total : total };
}
