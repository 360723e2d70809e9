// internal/server/migrate-events owns moving events.k8s.io Events out of the separate prefix
// earlier versions stored them under (`/registry/events.k8s.io/events/`) into the core event
// store they now share with core Events (`/registry/core/events/`, core shape). Data
// directories carry no format version, so this runs at every start, before the watch cache
// primes; with nothing under the old prefix it is one empty range read. A moved event keeps
// its name, uid and content and gets a new resourceVersion; one whose name a core Event
// already has is dropped (the core one was visible through both APIs, the old one through
// neither any more). Imports: store, storedobject, registry (keys, event conversion), log.

import type { Logger } from '../log/logger.js';
import { eventsV1ToCoreEvent } from '../registry/event-conversion.js';
import { REGISTRY_ROOT } from '../registry/keys.js';
import type { RevisionStore } from '../store/types.js';
import { decodeStored, encodeStored } from '../storedobject/stored-object.js';

const OLD_PREFIX = `${REGISTRY_ROOT}events.k8s.io/events/`;
const NEW_PREFIX = `${REGISTRY_ROOT}core/events/`;

/** Moves every event under the old prefix; returns how many were moved and dropped. */
export async function migrateSeparateEvents(store: RevisionStore, log: Logger): Promise<{ moved: number; dropped: number }> {
  let moved = 0;
  let dropped = 0;
  let after: string | undefined;
  for (;;) {
    const page = await store.range(OLD_PREFIX, { limit: 100, ...(after !== undefined ? { after } : {}) });
    if (page.kvs.length === 0) break;
    after = page.kvs[page.kvs.length - 1]!.key;
    for (const kv of page.kvs) {
      const newKey = NEW_PREFIX + kv.key.slice(OLD_PREFIX.length);
      let value: Buffer | undefined;
      try {
        const obj = decodeStored(kv.value, kv.modRevision);
        if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw new Error('stored value is not an object');
        // encodeStored drops the resourceVersion decodeStored added.
        value = encodeStored({ ...eventsV1ToCoreEvent(obj), apiVersion: 'v1', kind: 'Event' });
      } catch (e) {
        // Unreadable bytes are not worth keeping under a key nothing serves.
        log.warn('dropping unreadable events.k8s.io event from the old storage prefix', { key: kv.key, error: e instanceof Error ? e.message : String(e) });
      }
      const put = value
        ? await store.execute({
            type: 'txn',
            compares: [{ key: kv.key, modRevision: kv.modRevision }, { key: newKey, modRevision: 0 }],
            ops: [{ type: 'put', key: newKey, value }, { type: 'delete', key: kv.key }],
          })
        : undefined;
      if (put?.succeeded) {
        moved++;
        continue;
      }
      // The name is taken by a core event (or the bytes were unreadable): drop the old one.
      const removed = await store.execute({ type: 'txn', compares: [{ key: kv.key, modRevision: kv.modRevision }], ops: [{ type: 'delete', key: kv.key }] });
      if (removed.succeeded) {
        dropped++;
        if (value) log.warn('dropped events.k8s.io event whose name a core event already has', { key: kv.key });
      }
    }
    if (!page.more) break;
  }
  if (moved || dropped) log.warn('moved events.k8s.io events into the shared core event store', { moved, dropped });
  return { moved, dropped };
}
