// internal/codec/protobuf/well-known-values owns the conversions between the JSON form of
// apimachinery's custom-JSON types and the numbers their protobuf messages carry: RFC 3339 times
// (Time: seconds; MicroTime: microseconds), Go duration strings, Quantity syntax, and Go's string
// ordering for map keys. Pure functions. Imports: patch/json-value (setMember, re-exported as
// setOwn for the compiled messages).

export interface Timestamp {
  seconds: number;
  nanos: number;
}

/** Seconds of Go's zero time.Time (0001-01-01T00:00:00Z), which Time marshals as nothing. */
export const GO_ZERO_TIME_SECONDS = -62135596800;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/;

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const y = yoe + era * 400;
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [m <= 2 ? y + 1 : y, m, d];
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Parses an RFC 3339 timestamp as Go's time.Parse(time.RFC3339) accepts it (any number of
 * fractional digits, `Z` or a numeric offset). Returns undefined when it is not one.
 */
export function parseRfc3339(s: string): Timestamp | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const year = +m[1]!;
  const month = +m[2]!;
  const day = +m[3]!;
  const hour = +m[4]!;
  const minute = +m[5]!;
  const second = +m[6]!;
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > DAYS_IN_MONTH[month - 1]! + (month === 2 && leap ? 1 : 0)) return undefined;
  let offset = 0;
  const zone = m[8]!;
  if (zone !== 'Z') {
    const oh = +zone.slice(1, 3);
    const om = +zone.slice(4, 6);
    if (oh > 23 || om > 59) return undefined;
    offset = (oh * 3600 + om * 60) * (zone[0] === '-' ? -1 : 1);
  }
  const frac = m[7] ?? '';
  const nanos = frac === '' ? 0 : Math.floor(+(frac + '000000000').slice(0, 9));
  const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset;
  return { seconds, nanos };
}

/**
 * The seconds of a timestamp in the form the server writes, `YYYY-MM-DDTHH:MM:SSZ`, read from
 * its ASCII bytes b[start, end) without making a string; undefined for anything else (other forms
 * go to parseRfc3339, which decides).
 */
export function parsePlainUtcSeconds(b: Uint8Array, start: number, end: number): number | undefined {
  if (end - start !== 20 || b[start + 4] !== 0x2d || b[start + 7] !== 0x2d || b[start + 10] !== 0x54 || b[start + 13] !== 0x3a || b[start + 16] !== 0x3a || b[start + 19] !== 0x5a) {
    return undefined;
  }
  // Two digits at a time, without a loop or a closure: this runs for every timestamp of a first
  // protobuf list, and is compiled while that list is written (a smaller graph compiles sooner).
  const century = twoDigits(b, start);
  const yy = twoDigits(b, start + 2);
  const month = twoDigits(b, start + 5);
  const day = twoDigits(b, start + 8);
  const hour = twoDigits(b, start + 11);
  const minute = twoDigits(b, start + 14);
  const second = twoDigits(b, start + 17);
  if (century < 0 || yy < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  const year = century * 100 + yy;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > DAYS_IN_MONTH[month - 1]! + (month === 2 && leap ? 1 : 0)) return undefined;
  return daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
}

/** The number of the two ASCII digits at b[at], or -1 when they are not both digits. */
function twoDigits(b: Uint8Array, at: number): number {
  const x = b[at]! - 0x30;
  const y = b[at + 1]! - 0x30;
  return x >= 0 && x <= 9 && y >= 0 && y <= 9 ? x * 10 + y : -1;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * Formats UTC RFC 3339 as metav1.Time (no fraction) or metav1.MicroTime (six fractional digits,
 * nanoseconds truncated) marshal to JSON. Returns undefined for years outside 0000-9999, which Go's
 * encoder refuses too.
 */
export function formatRfc3339(seconds: number, nanos: number, micro: boolean): string | undefined {
  // Normalize nanos into [0, 1e9) as time.Unix does.
  if (nanos < 0 || nanos >= 1e9) {
    seconds += Math.floor(nanos / 1e9);
    nanos = ((nanos % 1e9) + 1e9) % 1e9;
  }
  const days = Math.floor(seconds / 86400);
  const rem = seconds - days * 86400;
  const [y, mo, d] = civilFromDays(days);
  if (y < 0 || y > 9999 || !Number.isFinite(y)) return undefined;
  const h = Math.floor(rem / 3600);
  const mi = Math.floor((rem % 3600) / 60);
  const s = rem % 60;
  const date = `${String(y).padStart(4, '0')}-${pad2(mo)}-${pad2(d)}T${pad2(h)}:${pad2(mi)}:${pad2(s)}`;
  if (!micro) return `${date}Z`;
  return `${date}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

const UNIT_NANOS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  'µs': 1000n, // U+00B5 micro sign
  'μs': 1000n, // U+03BC Greek mu
  ms: 1000000n,
  s: 1000000000n,
  m: 60000000000n,
  h: 3600000000000n,
};

const MAX_INT64 = (1n << 63n) - 1n;

/** Parses a Go duration string (time.ParseDuration) into nanoseconds; undefined if invalid. */
export function parseGoDuration(s: string): bigint | undefined {
  let rest = s;
  let neg = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    neg = rest[0] === '-';
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') return undefined;
  let total = 0n;
  const part = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;
  while (rest !== '') {
    const m = part.exec(rest);
    if (!m || (m[1] === '' && (m[2] === undefined || m[2] === ''))) return undefined;
    const unit = UNIT_NANOS[m[3]!]!;
    let v = BigInt(m[1] || '0') * unit;
    const frac = m[2] ?? '';
    if (frac !== '') v += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    total += v;
    if (total > MAX_INT64 + (neg ? 1n : 0n)) return undefined;
    rest = rest.slice(m[0].length);
  }
  return neg ? -total : total;
}

// Go's fmtFrac: the fraction of v / 10^prec without trailing zeros (and no dot when it is zero).
function fracPart(v: bigint, prec: number): [string, bigint] {
  let digits = '';
  let print = false;
  for (let i = 0; i < prec; i++) {
    const digit = v % 10n;
    print = print || digit !== 0n;
    if (print) digits = `${digit}${digits}`;
    v /= 10n;
  }
  return [print ? `.${digits}` : '', v];
}

/** Formats nanoseconds as Go's time.Duration.String (`1h0m0s`, `1.5s`, `300ms`, `0s`). */
export function formatGoDuration(d: bigint): string {
  if (d === 0n) return '0s';
  const neg = d < 0n;
  let u = neg ? -d : d;
  let out: string;
  if (u < 1000000000n) {
    let unit: string;
    let prec: number;
    if (u < 1000n) {
      unit = 'ns';
      prec = 0;
    } else if (u < 1000000n) {
      unit = 'µs';
      prec = 3;
    } else {
      unit = 'ms';
      prec = 6;
    }
    const [frac, whole] = fracPart(u, prec);
    out = `${whole}${frac}${unit}`;
  } else {
    const [frac, secs] = fracPart(u, 9);
    u = secs;
    out = `${u % 60n}${frac}s`;
    u /= 60n;
    if (u > 0n) {
      out = `${u % 60n}m${out}`;
      u /= 60n;
      if (u > 0n) out = `${u}h${out}`;
    }
  }
  return neg ? `-${out}` : out;
}

/** The grammar resource.ParseQuantity accepts: a signed decimal and an optional suffix. */
const QUANTITY = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/;

export function isQuantity(s: string): boolean {
  return QUANTITY.test(s);
}

/**
 * Go's string order (bytewise UTF-8), which map keys are sorted by on the wire. It differs from
 * JavaScript's UTF-16 order only where a supplementary character meets one in U+E000–U+FFFF.
 */
export function compareGoStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let ca = a.charCodeAt(i);
    let cb = b.charCodeAt(i);
    if (ca === cb) continue;
    if (ca >= 0xd800 && cb >= 0xd800) {
      if (ca <= 0xdfff) ca += 0x2800;
      if (cb <= 0xdfff) cb += 0x2800;
    }
    return ca - cb;
  }
  return a.length - b.length;
}

const NEEDS_GO_ORDER = /[\ud800-\uffff]/;

/** Object keys in Go's map-key order. */
export function sortedKeys(o: object): string[] {
  const keys = Object.keys(o);
  if (keys.length < 2) return keys;
  keys.sort();
  for (const k of keys) {
    if (NEEDS_GO_ORDER.test(k)) return keys.sort(compareGoStrings);
  }
  return keys;
}

/** Sets an own property even for `__proto__`, so decoded maps cannot touch prototypes. */
export { setMember as setOwn } from '../../patch/json-value.js';
