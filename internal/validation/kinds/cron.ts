// internal/validation/kinds/cron owns the CronJob schedule grammar upstream accepts (the standard
// five-field cron of robfig/cron: minute hour day-of-month month day-of-week, with `*`, `?`,
// ranges, steps, lists, month and weekday names; and the descriptors @yearly @annually @monthly
// @weekly @daily @midnight @hourly @every <duration>), returning upstream-like parse errors.
// Imports: nothing from the project.

interface FieldBounds {
  readonly min: number;
  readonly max: number;
  readonly names?: Readonly<Record<string, number>>;
}

const MONTHS: Record<string, number> = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };
const DAYS: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

const FIELDS: readonly FieldBounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS },
  { min: 0, max: 6, names: DAYS },
];

const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

// Go's time.ParseDuration: a sequence of decimal numbers with units.
const GO_DURATION = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;

function parseValue(text: string, bounds: FieldBounds): number | string {
  const named = bounds.names?.[text.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^\d+$/.test(text)) return `failed to parse int from ${text}: strconv.Atoi: parsing "${text}": invalid syntax`;
  return Number(text);
}

function checkRange(expr: string, bounds: FieldBounds): string | undefined {
  const [rangeText, stepText, ...extra] = expr.split('/');
  if (extra.length > 0) return `too many slashes: ${expr}`;
  let start: number;
  let end: number;
  if (rangeText === '*' || rangeText === '?') {
    start = bounds.min;
    end = bounds.max;
  } else {
    const parts = rangeText!.split('-');
    if (parts.length > 2) return `too many hyphens: ${expr}`;
    const a = parseValue(parts[0]!, bounds);
    if (typeof a === 'string') return a;
    start = a;
    if (parts.length === 2) {
      const b = parseValue(parts[1]!, bounds);
      if (typeof b === 'string') return b;
      end = b;
    } else {
      end = stepText !== undefined ? bounds.max : a;
    }
  }
  if (stepText !== undefined) {
    const step = parseValue(stepText, { min: 0, max: 0 });
    if (typeof step === 'string') return step;
    if (step <= 0) return `step of range should be a positive number: ${expr}`;
  }
  if (start < bounds.min) return `beginning of range (${start}) below minimum (${bounds.min}): ${expr}`;
  if (end > bounds.max) return `end of range (${end}) above maximum (${bounds.max}): ${expr}`;
  if (start > end) return `beginning of range (${start}) beyond end of range (${end}): ${expr}`;
  return undefined;
}

/** Undefined when `schedule` parses; otherwise the parse error. */
export function cronScheduleError(schedule: string): string | undefined {
  const spec = schedule.trim();
  if (spec === '') return 'empty spec string';
  if (spec.startsWith('@')) {
    if (spec.startsWith('@every ')) {
      const d = spec.slice('@every '.length).trim();
      return GO_DURATION.test(d) ? undefined : `failed to parse duration ${spec}: time: invalid duration "${d}"`;
    }
    return DESCRIPTORS.has(spec) ? undefined : `unrecognized descriptor: ${spec}`;
  }
  const fields = spec.split(/\s+/);
  if (fields.length !== FIELDS.length) return `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`;
  for (let i = 0; i < fields.length; i++) {
    for (const expr of fields[i]!.split(',')) {
      const err = checkRange(expr, FIELDS[i]!);
      if (err) return err;
    }
  }
  return undefined;
}

/** Whether a time-zone name is known (Go's LoadLocation rejects `Local` here, as upstream does). */
export function isValidTimeZone(name: string): boolean {
  if (name === '' || name === 'Local') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
