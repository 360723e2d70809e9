// internal/schema/versions owns API version names: their stability level and the priority
// order discovery uses (GA before beta before alpha, higher numbers first).
// Imports: nothing from the project.

export type Stability = 'ga' | 'beta' | 'alpha';

const VERSION_RE = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

export function stabilityOf(version: string): Stability {
  const m = VERSION_RE.exec(version);
  if (!m) return 'alpha';
  return (m[2] as Stability | undefined) ?? 'ga';
}

/** Sort comparator: the preferred version first. Unknown shapes sort last, alphabetically. */
export function compareVersionPriority(a: string, b: string): number {
  const ma = VERSION_RE.exec(a);
  const mb = VERSION_RE.exec(b);
  if (!ma || !mb) return ma ? -1 : mb ? 1 : a.localeCompare(b);
  const rank = (m: RegExpExecArray) => (m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1);
  return (
    rank(mb) - rank(ma) ||
    Number(mb[1]) - Number(ma[1]) ||
    Number(mb[3] ?? 0) - Number(ma[3] ?? 0)
  );
}
