// e2e/support/load-protocol owns what the cluster e2e tests' load processes (load-client-main)
// are told and what they report: one JSON line per completed operation, with invocation and
// response times on the machine's monotonic clock (shared by every process, so the test can
// order them against its own watch events and faults). Test-only.

export interface LoadClientConfig {
  clientId: number;
  /** Concurrent operation loops in the process. */
  workers: number;
  /** Replica name → API URL; every operation picks one at random. */
  replicas: Record<string, string>;
  pkiDir: string;
  namespace: string;
  keys: string[];
  seed: number;
  requestTimeoutMs: number;
  /** Pause between a loop's operations. */
  thinkMs: number;
}

/**
 * One operation as the client saw it.
 *   out: ok | notfound | exists (409 AlreadyExists) | conflict (409 Conflict) | failed (certainly
 *        not applied: 503, 429, connection refused; for reads: anything but 200/404) |
 *        unknown (504, reset, timeout, or a status the contract does not explain) |
 *        refused (a create answered 404 for its namespace: certainly not applied, but not the
 *        503 the contract promises while there is no leader)
 */
export interface OpRecord {
  c: number;
  op: 'get' | 'create' | 'update';
  key: string;
  /** The value written (create, update). */
  v?: string;
  /** The update's resourceVersion precondition. */
  e?: string;
  replica: string;
  call: number;
  ret: number;
  out: 'ok' | 'notfound' | 'exists' | 'conflict' | 'failed' | 'unknown' | 'refused';
  /** ok: the value read (get) and the version read or written. */
  value?: string;
  rv?: string;
  status?: number;
  /** The reason or error code behind a failed/unknown/refused outcome. */
  why?: string;
}

/** Milliseconds on CLOCK_MONOTONIC (the same clock in every process on the machine). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1000n) / 1000;
}
