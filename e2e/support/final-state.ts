// e2e/support/final-state owns the end of a cluster e2e run: a consistent list of the test's
// ConfigMaps from every replica (timed on the monotonic clock, for the history checker), and
// waiting until every watcher's state has caught up with it. Test-only.

import type { ClusterProcess } from './cluster-process.js';
import { sleep } from './cluster-process.js';
import { watcherCaughtUp, type FinalList } from './history-analysis.js';
import { monotonicMs } from './load-protocol.js';
import type { WatchLog } from './retrying-watcher.js';

export async function finalLists(cluster: ClusterProcess, namespace: string, names = cluster.runningNames()): Promise<FinalList[]> {
  const out: FinalList[] = [];
  for (const name of names) {
    const call = monotonicMs();
    const r = await cluster.http.json<{ metadata: { resourceVersion: string }; items: Array<{ metadata: { name: string; resourceVersion: string; uid: string }; data?: { v?: string } }> }>(
      cluster.url(name),
      'GET',
      `/api/v1/namespaces/${namespace}/configmaps`,
      undefined,
      30_000,
    );
    const ret = monotonicMs();
    if (r.status !== 200) throw new Error(`final list from ${name}: ${r.status} ${JSON.stringify(r.body)}`);
    out.push({
      replica: name,
      call,
      ret,
      rv: r.body.metadata.resourceVersion,
      items: new Map(r.body.items.map((i) => [i.metadata.name, { value: i.data?.v ?? '', rv: i.metadata.resourceVersion, uid: i.metadata.uid }])),
    });
  }
  return out;
}

/** Waits (up to `timeoutMs`) until every watcher's state equals `final`; false if some never did. */
export async function waitWatchersCaughtUp(watchers: WatchLog[], final: FinalList, timeoutMs = 60_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!watchers.every((w) => watcherCaughtUp(w, final.items))) {
    if (Date.now() > deadline) return false;
    await sleep(200);
  }
  return true;
}
