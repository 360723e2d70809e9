// internal/validation/quantity owns resource quantities (`500m`, `1.5Gi`, `1e3`): parsing with
// upstream's grammar, exact comparison, and the canonical spelling upstream stores and returns
// (`0.5` → `500m`, `1024Mi` → `1Gi`, `1000m` → `1`). Values are kept exactly as BigInt counts of
// nano-units, rounded up (away from zero) below nano precision as upstream does.
// Imports: nothing from the project.

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface Quantity {
  /** The value in units of 10^-9, rounded away from zero. */
  readonly nanos: bigint;
  /** The spelling family of the input, kept for canonical output. */
  readonly format: QuantityFormat;
}

/** Upstream's message for a malformed quantity. */
export const QUANTITY_FORMAT_MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const NANO = 1_000_000_000n;
const DECIMAL_SUFFIX_EXP: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX_POW: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const DECIMAL_SUFFIXES: Record<number, string> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };

// Exponents far outside anything meaningful would make BigInt arithmetic explode; upstream caps
// such values too. 10^300 is far beyond every resource anyone declares.
const MAX_DECIMAL_EXPONENT = 300;

const NUMBER_RE = /^([+-]?)(\d*)(?:\.(\d*))?(.*)$/;

const pow10 = (n: number): bigint => 10n ** BigInt(n);

function divRoundAway(num: bigint, den: bigint): bigint {
  const q = num / den;
  if (num % den === 0n) return q;
  return num < 0n ? q - 1n : q + 1n;
}

// Every pod write parses the same few spellings (`100m`, `128Mi`) several times over (decode
// check, schema, kind rules, defaulting), and BigInt arithmetic is slow: remember the answers.
// Quantities are immutable, so a remembered one can be shared. Bounded: cleared when full.
const PARSED_LIMIT = 1024;
const parsed = new Map<string, Quantity | undefined>();

/** Parses a quantity string (or a JSON number); undefined when it is not a quantity. */
export function parseQuantity(input: string | number): Quantity | undefined {
  if (typeof input === 'number') return parseUncached(input);
  const known = parsed.get(input);
  if (known !== undefined || parsed.has(input)) return known;
  const q = parseUncached(input);
  if (parsed.size >= PARSED_LIMIT) parsed.clear();
  parsed.set(input, q);
  return q;
}

function parseUncached(input: string | number): Quantity | undefined {
  let text: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return undefined;
    text = String(input);
  } else {
    text = input.trim() === input ? input : '';
  }
  if (text === '') return undefined;
  const m = NUMBER_RE.exec(text);
  if (!m) return undefined;
  const [, sign, intDigits = '', fracDigits = '', suffix = ''] = m;
  if (intDigits === '' && fracDigits === '') return undefined;

  let format: QuantityFormat;
  let exp10 = 0;
  let pow1024 = 0;
  if (suffix in DECIMAL_SUFFIX_EXP) {
    format = 'DecimalSI';
    exp10 = DECIMAL_SUFFIX_EXP[suffix]!;
  } else if (suffix in BINARY_SUFFIX_POW) {
    format = 'BinarySI';
    pow1024 = BINARY_SUFFIX_POW[suffix]!;
  } else if (/^[eE][+-]?\d+$/.test(suffix)) {
    format = 'DecimalExponent';
    exp10 = Number(suffix.slice(1));
    if (Math.abs(exp10) > MAX_DECIMAL_EXPONENT) return undefined;
  } else {
    return undefined;
  }
  const digits = `${intDigits}${fracDigits}`;
  if (digits.length > MAX_DECIMAL_EXPONENT) return undefined;
  const num = BigInt(digits) * 1024n ** BigInt(pow1024);
  // value = num × 10^(exp10 − fracDigits); in nanos: × 10^9.
  const shift = exp10 - fracDigits.length + 9;
  let nanos: bigint;
  if (shift >= 0) nanos = num * pow10(shift);
  else nanos = divRoundAway(num, pow10(-shift));
  if (sign === '-') nanos = -nanos;
  return Object.freeze({ nanos, format });
}

/** -1, 0 or 1. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
}

/** Rounds away from zero to 10^scale units (scale −3 = milli), as upstream's ResourceList defaulting does. */
export function roundUpQuantity(q: Quantity, scale: number): Quantity {
  if (scale <= -9) return q;
  const unit = pow10(scale + 9);
  return { nanos: divRoundAway(q.nanos, unit) * unit, format: q.format };
}

function decimalParts(nanos: bigint): { mantissa: bigint; exponent: number } {
  if (nanos === 0n) return { mantissa: 0n, exponent: 0 };
  let mantissa = nanos;
  let exponent = -9;
  while (mantissa % 1000n === 0n) {
    mantissa /= 1000n;
    exponent += 3;
  }
  return { mantissa, exponent };
}

/** The canonical spelling: no fractional digits, the largest exponent that loses no precision. */
export function formatQuantity(q: Quantity): string {
  if (q.nanos === 0n) return '0';
  const abs = q.nanos < 0n ? -q.nanos : q.nanos;
  const sign = q.nanos < 0n ? '-' : '';
  if (q.format === 'BinarySI' && abs >= 1024n * NANO && abs % NANO === 0n) {
    let n = abs / NANO;
    let k = 0;
    while (k < 6 && n % 1024n === 0n) {
      n /= 1024n;
      k++;
    }
    return `${sign}${n}${BINARY_SUFFIXES[k]}`;
  }
  let { mantissa, exponent } = decimalParts(abs);
  if (q.format === 'DecimalExponent') return `${sign}${mantissa}${exponent === 0 ? '' : `e${exponent}`}`;
  // DecimalSI has no suffix beyond E: keep the extra zeros in the mantissa.
  while (exponent > 18) {
    mantissa *= 1000n;
    exponent -= 3;
  }
  return `${sign}${mantissa}${DECIMAL_SUFFIXES[exponent]}`;
}

/** Canonical spelling of a quantity given as string or number; undefined when it does not parse. */
export function canonicalQuantity(input: string | number): string | undefined {
  const q = parseQuantity(input);
  return q ? formatQuantity(q) : undefined;
}
