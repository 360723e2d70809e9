// internal/health owns /livez, /readyz and /healthz (spec §4.10): named checks, `verbose`
// output (`[+]<name> ok`, then a summary line), `exclude=<name>`, per-check sub-paths,
// start-up hooks that /livez forgives during --livez-grace-period, and the shutdown check that
// makes /readyz fail the moment termination begins. Imports: nothing from the project.

export interface HealthCheck {
  readonly name: string;
  /** Resolves when healthy; throws (or rejects) with the reason otherwise. */
  check(): void | Promise<void>;
}

export type Endpoint = 'livez' | 'readyz' | 'healthz';

export interface HealthResponse {
  status: number;
  body: string;
}

/**
 * Told when a check starts failing (with the reason then) and when it passes again: the reasons
 * the anonymous endpoints withhold go to the log, once per failure rather than once per probe
 * (a reason may carry figures that change at every probe, such as an applied index).
 */
export type CheckTransition = (endpoint: Endpoint, name: string, reason: string | undefined) => void;

export class HealthChecks {
  private readonly checks: Record<Endpoint, HealthCheck[]> = { livez: [], readyz: [], healthz: [] };
  /** The checks (endpoint/name) whose failure was reported and that have not passed since. */
  private readonly failing = new Set<string>();
  /** The checks (endpoint/name) that have passed at least once since start. */
  private readonly passed = new Set<string>();
  private readonly hooks = new Map<string, boolean>();
  private shuttingDown = false;
  private readonly startedAt: number;

  constructor(
    private readonly livezGracePeriodMs: number,
    private readonly now: () => number = Date.now,
    private readonly onTransition: CheckTransition = () => {},
    /**
     * For this long after start a check that has not passed yet is starting, not failing: the
     * start-up hooks and the first leader take a moment, and probes during it are no news.
     */
    private readonly quietStartMs = 0,
  ) {
    this.startedAt = now();
    this.add(['livez', 'readyz', 'healthz'], { name: 'ping', check: () => {} });
    this.add(['livez', 'readyz', 'healthz'], { name: 'log', check: () => {} });
    this.add(['readyz'], {
      name: 'shutdown',
      check: () => {
        if (this.shuttingDown) throw new Error(SHUTTING_DOWN);
      },
    });
  }

  add(endpoints: readonly Endpoint[], check: HealthCheck): void {
    for (const e of endpoints) this.checks[e].push(check);
  }

  /** A start-up hook: unhealthy until `complete` is called. */
  /**
   * `livez: false` keeps the hook out of /livez: work that waits for other replicas (a Raft
   * leader) must not make a live process look dead and get it restarted.
   */
  addStartupHook(name: string, options: { livez?: boolean } = {}): () => void {
    const full = `poststarthook/${name}`;
    this.hooks.set(full, false);
    const check: HealthCheck = {
      name: full,
      check: () => {
        if (!this.hooks.get(full)) throw new Error('not finished');
      },
    };
    this.add(['readyz', 'healthz'], check);
    if (options.livez !== false) this.add(['livez'], {
      name: full,
      check: () => {
        // Within the grace period liveness assumes unfinished hooks will finish.
        if (!this.hooks.get(full) && this.now() - this.startedAt > this.livezGracePeriodMs) throw new Error('not finished');
      },
    });
    return () => this.hooks.set(full, true);
  }

  /** The paths this serves, each endpoint followed by its per-check paths (for the root path list). */
  paths(): string[] {
    return (['healthz', 'livez', 'readyz'] as const).flatMap((e) => [`/${e}`, ...this.checks[e].map((c) => `/${e}/${c.name}`)]);
  }

  beginShutdown(): void {
    this.shuttingDown = true;
  }

  /** Answers `/<endpoint>[/<check>]` with its query. Returns undefined for an unknown check path. */
  async respond(endpoint: Endpoint, checkName: string | undefined, query: URLSearchParams): Promise<HealthResponse | undefined> {
    const checks = this.checks[endpoint];
    if (checkName) {
      const c = checks.find((x) => x.name === checkName);
      if (!c) return undefined;
      try {
        await c.check();
        return { status: 200, body: 'ok' };
      } catch (e) {
        return { status: 500, body: `internal server error: ${reason(e)}` };
      }
    }
    const excluded = new Set(query.getAll('exclude'));
    const verbose = query.has('verbose') && query.get('verbose') !== 'false';
    const lines: string[] = [];
    let failed = false;
    for (const c of checks) {
      if (excluded.has(c.name)) {
        lines.push(`[+]${c.name} excluded: ok`);
        excluded.delete(c.name);
        continue;
      }
      try {
        await c.check();
        lines.push(`[+]${c.name} ok`);
        this.report(endpoint, c.name, undefined);
      } catch (e) {
        failed = true;
        // The reason goes to the log (report): the endpoint is readable anonymously.
        lines.push(`[-]${c.name} failed: reason withheld`);
        this.report(endpoint, c.name, reason(e));
      }
    }
    for (const unknown of excluded) lines.push(`warn: some health checks cannot be excluded: no matches for "${unknown}"`);
    if (failed) return { status: 500, body: `${lines.join('\n')}\n${endpoint} check failed\n` };
    if (!verbose) return { status: 200, body: 'ok' };
    return { status: 200, body: `${lines.join('\n')}\n${endpoint} check passed\n` };
  }

  private report(endpoint: Endpoint, name: string, why: string | undefined): void {
    const key = `${endpoint}/${name}`;
    if (why === undefined) this.passed.add(key);
    // Still failing, still passing, or a check that has only ever passed: nothing to say.
    if ((why !== undefined) === this.failing.has(key)) return;
    if (why !== undefined && !this.passed.has(key) && this.now() - this.startedAt < this.quietStartMs) return;
    if (why === undefined) this.failing.delete(key);
    else this.failing.add(key);
    this.onTransition(endpoint, name, why);
  }
}

/** The shutdown check's failure reason: what another replica looks for (saysShuttingDown). */
const SHUTTING_DOWN = 'process is shutting down';

/**
 * Whether an answer to `/readyz/shutdown` says the process is shutting down: the check's own
 * failure, not any answer other than 200. A 404 (a replica without the check), a 403, a 429
 * from priority and fairness or a 5xx of a proxy in between says nothing about the process.
 */
export function saysShuttingDown(status: number, body: string): boolean {
  return status === 500 && body.includes(SHUTTING_DOWN);
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
