// internal/async/bounded owns running a list of independent asynchronous jobs with a bound on
// how many are in flight: start-up writes (bootstrap namespaces, RBAC policy, flow control
// defaults), and a delete-collection request's deletes, go to the store a few at a time, so
// that one group commit (or one Raft batch) carries several of them instead of one write
// waiting for the previous one's fsync and replication. Every job is run to its end even when
// one fails; the first failure (in the order of the items) is thrown once all have settled, so
// nothing is left running behind the caller's back. Imports: none.

/**
 * Calls `run` for every item with at most `limit` calls in flight, and resolves once all have
 * settled; rejects with the first failure in item order. Results come back in item order.
 */
export async function settleBounded<T, R>(items: readonly T[], limit: number, run: (item: T, index: number) => Promise<R>): Promise<R[]> {
  if (!(limit >= 1)) throw new RangeError(`settleBounded: limit must be at least 1, not ${limit}`);
  const results: PromiseSettledResult<R>[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      try {
        results[i] = { status: 'fulfilled', value: await run(items[i]!, i) };
      } catch (reason) {
        results[i] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<R>).value);
}

/**
 * Start-up writes in flight at once: enough for a batch per fsync and per Raft round, few
 * enough that a loaded replica does not queue a hundred writes behind its clients' requests.
 */
export const STARTUP_WRITES_IN_FLIGHT = 8;
