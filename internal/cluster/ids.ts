// internal/cluster/ids owns how a replica's name becomes its Raft member id and the common name
// of its peer certificate: ids are derived from names (32 bits of SHA-256: the Raft core's
// membership-change entries carry ids as 32-bit integers), so every replica,
// the PKI generator and a joining replica agree on them without a registry of ids.
// Imports: nothing from the project (raft's cluster-ca would load the certificate library into
// the server; ids.test.ts checks that the names agree with its memberCommonName).

import { createHash } from 'node:crypto';

/** Replica names follow DNS label rules, as StatefulSet pod names and compose service names do. */
export const REPLICA_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The Raft member id of the replica called `name` (never 0, which Raft reserves for "none"). */
export function nodeIdOf(name: string): number {
  const id = parseInt(createHash('sha256').update(name).digest('hex').slice(0, 8), 16);
  return id === 0 ? 1 : id;
}

/** The subject CN a replica's peer certificate must carry (checked by the peer transport). */
export function peerCommonNameOf(name: string): string {
  return `raft-member-${nodeIdOf(name)}`;
}
