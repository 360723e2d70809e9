// internal/metrics/stability owns the lifecycle of a metric as upstream's metrics framework
// has it (spec §9.3): a stability level shown in the help text (`[STABLE] …`), deprecation
// (`(Deprecated from x.y)` in the help text, a warning at registration) and hiding — a
// deprecated metric is no longer registered, and so absent from /metrics, once its release
// after deprecation has come; `--show-hidden-metrics-for-version=<previous minor>` shows it
// again for one more release. Imports: nothing from the project.

export type StabilityLevel = 'ALPHA' | 'BETA' | 'STABLE';

export interface MetricLifecycle {
  readonly stability: StabilityLevel;
  /** `major.minor` of the release that deprecated the metric. */
  readonly deprecatedVersion?: string;
}

/** Major and minor of the running binary (SERVER_VERSION's). */
export interface BinaryVersion {
  readonly major: number;
  readonly minor: number;
}

/**
 * Releases a deprecated metric stays visible, by stability (spec §9.3: a stable metric three
 * releases after deprecation; beta one). Alpha metrics may go at once; upstream's framework
 * hides them from the release after deprecation, and so does this.
 */
const VISIBLE_RELEASES_AFTER_DEPRECATION: Record<StabilityLevel, number> = { STABLE: 3, BETA: 1, ALPHA: 1 };

const parseMinor = (v: string): BinaryVersion | undefined => {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?$/.exec(v);
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
};

/** Whether a metric is past its visible releases in the running version. */
export function isHiddenIn(lifecycle: MetricLifecycle, current: BinaryVersion): boolean {
  if (!lifecycle.deprecatedVersion) return false;
  const deprecated = parseMinor(lifecycle.deprecatedVersion);
  if (!deprecated) throw new Error(`invalid deprecatedVersion ${lifecycle.deprecatedVersion}`);
  if (current.major !== deprecated.major) return current.major > deprecated.major;
  return current.minor >= deprecated.minor + VISIBLE_RELEASES_AFTER_DEPRECATION[lifecycle.stability];
}

/** The help text as upstream prints it: stability first, then any deprecation. */
export function decoratedHelp(help: string, lifecycle: MetricLifecycle): string {
  const deprecated = lifecycle.deprecatedVersion ? `(Deprecated from ${lifecycle.deprecatedVersion}) ` : '';
  return `[${lifecycle.stability}] ${deprecated}${help}`;
}

/**
 * Checks `--show-hidden-metrics-for-version`: only the previous minor release means anything
 * (the metrics hidden in this release were visible there), as upstream, so any other value
 * is refused at start. Returns whether hidden metrics are shown.
 */
export function showHiddenMetrics(value: string | undefined, current: BinaryVersion): boolean {
  if (value === undefined || value === '') return false;
  const previous = `${current.major}.${current.minor - 1}`;
  if (value !== previous) {
    throw new Error(
      `--show-hidden-metrics-for-version must be omitted or have the value '${previous}'. Only the previous minor version is meaningful, other values are not allowed.`,
    );
  }
  return true;
}
