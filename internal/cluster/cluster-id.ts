// internal/cluster/cluster-id owns a replica's cluster identity: the id every peer message
// carries and every peer checks (the transport refuses another's), as etcd's cluster ID. It is
// decided once, at a replica's first start, and kept in <data-dir>/cluster-id:
//   - a founder derives it from the peer CA and the founding member list (--initial-cluster,
//     order and spelling of the flag aside), so a founder started with another list than the
//     others is refused by them instead of joining with a membership of its own;
//   - a joiner takes the id of the member that admitted it (join response);
//   - a data directory of an earlier build, which kept no id, goes on with the id those builds
//     used (the peer CA's hash alone), which its peers also use.
// Imports: pki/cluster-pki (writeAtomic).

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../pki/cluster-pki.js';

export const CLUSTER_ID_FILE = 'cluster-id';

/** What earlier builds used, and what a cluster formed by them keeps using. */
export function legacyClusterId(peerCa: string): string {
  return createHash('sha256').update(peerCa).digest('hex').slice(0, 16);
}

/** A founding cluster's id: the peer CA and the founders (name and peer address), sorted. */
export function foundingClusterId(peerCa: string, founders: readonly { name: string; peerAddress: string }[]): string {
  const members = founders.map((m) => `${m.name}=${m.peerAddress.toLowerCase()}`).sort().join(',');
  return createHash('sha256').update(peerCa).update('\n').update(members).digest('hex').slice(0, 16);
}

/**
 * This replica's cluster id: the recorded one; else, at a first start, the founders' (or the
 * one a join brought: `joined`), recorded; else (a directory of an earlier build) the legacy
 * one, recorded.
 */
export function clusterIdentity(
  dataDir: string,
  peerCa: string,
  o: { firstStart: boolean; founders: readonly { name: string; peerAddress: string }[]; joined?: string | undefined },
): string {
  const path = join(dataDir, CLUSTER_ID_FILE);
  if (existsSync(path)) {
    const recorded = readFileSync(path, 'utf8').trim();
    if (/^[0-9a-f]{16}$/.test(recorded)) return recorded;
    throw new Error(`${path} does not hold a cluster id (16 hex digits): restore it, or remove the data directory to start the replica afresh`);
  }
  const id = o.joined ?? (o.firstStart && o.founders.length > 0 ? foundingClusterId(peerCa, o.founders) : legacyClusterId(peerCa));
  writeAtomic(path, `${id}\n`, 0o644);
  return id;
}
