// internal/printers/human-duration owns how ages and durations read in tables: upstream's
// HumanDuration (`45s`, `3m4s`, `12m`, `5h3m`, `2d4h`, `300d`, `3y20d`) and the "time since a
// timestamp" wrapper with its `<unknown>` and `<invalid>` cases. Time is passed in, never read.
// Imports: nothing from the project.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Go's integer division of durations truncates toward zero. */
const div = (ms: number, unit: number): number => Math.trunc(ms / unit);

/**
 * A duration in milliseconds, with about two significant figures. Up to 1 s in the future reads
 * as `0s` (clock skew between machines); further in the future is `<invalid>`.
 */
export function humanDuration(ms: number): string {
  const seconds = div(ms, SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = div(ms, MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = div(ms, HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${div(hours, 24)}d` : `${div(hours, 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${div(hours, 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = div(hours, 24) % 365;
    return dy === 0 ? `${div(hours, 24 * 365)}y` : `${div(hours, 24 * 365)}y${dy}d`;
  }
  return `${div(hours, 24 * 365)}y`;
}

/** Milliseconds since the epoch of an RFC 3339 timestamp, or undefined when absent or unreadable. */
export function parseTimestamp(ts: unknown): number | undefined {
  if (typeof ts !== 'string' || ts === '') return undefined;
  const ms = Date.parse(ts);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Upstream's translateTimestampSince: `<unknown>` for a missing time, else the age. */
export function timeSince(ts: unknown, now: Date): string {
  const ms = parseTimestamp(ts);
  return ms === undefined ? '<unknown>' : humanDuration(now.getTime() - ms);
}

/** Go's RFC 3339 form of a metav1.Time in UTC, seconds precision (`0001-01-01T00:00:00Z` when unset). */
export function rfc3339(ts: unknown): string {
  const ms = parseTimestamp(ts);
  if (ms === undefined) return '0001-01-01T00:00:00Z';
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
