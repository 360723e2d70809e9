// bench/report/rows owns the shape of one reported figure and the checks against the issue's
// targets: a figure, the baseline it is compared with, their ratio, the target and whether it
// holds. Imports: none.

export interface Row {
  scenario: string;
  figure: string;
  unit: string;
  /** clusterd's figure; null when the scenario could not run (see note). */
  value: number | null;
  baseline?: { name: string; value: number | null };
  /** value / baseline.value when both exist. */
  ratio?: number | null;
  /** The target as the issue states it, or `reported`. */
  target: string;
  /** true/false when the target is checked; null when only reported or not measurable. */
  holds: boolean | null;
  note?: string;
}

export function ratioOf(value: number | null | undefined, baseline: number | null | undefined): number | null {
  if (value === null || value === undefined || baseline === null || baseline === undefined || baseline === 0) return null;
  return value / baseline;
}

/** A row for a scenario that did not run; `why` says what is missing. */
export function notAvailable(scenario: string, figure: string, target: string, why: string): Row {
  return { scenario, figure, unit: '', value: null, target, holds: null, note: `n/a: ${why}` };
}
