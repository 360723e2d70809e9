// cluster-id: decided once per data directory — a founder's from the peer CA and the founding
// member list, a joiner's from the member that admitted it, an earlier build's directory the
// peer CA's hash — and read back afterwards whatever the flags say.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLUSTER_ID_FILE, clusterIdentity, foundingClusterId, legacyClusterId } from './cluster-id.js';

const CA = '-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n';
const FOUNDERS = [
  { name: 'a', peerAddress: '127.0.0.1:2380' },
  { name: 'b', peerAddress: '127.0.0.1:2381' },
  { name: 'c', peerAddress: '127.0.0.1:2382' },
];

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'clusterd-cluster-id-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('foundingClusterId', () => {
  it('is the same for every founder given the same members in any order, and differs for another list or CA', () => {
    const id = foundingClusterId(CA, FOUNDERS);
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(foundingClusterId(CA, [...FOUNDERS].reverse())).toBe(id);
    expect(foundingClusterId(CA, FOUNDERS.map((m) => ({ ...m, peerAddress: m.peerAddress.toUpperCase() })))).toBe(id);
    expect(foundingClusterId(CA, [...FOUNDERS, { name: 'd', peerAddress: '127.0.0.1:2383' }])).not.toBe(id);
    expect(foundingClusterId(CA, FOUNDERS.slice(0, 2))).not.toBe(id);
    expect(foundingClusterId(CA, [FOUNDERS[0]!, FOUNDERS[1]!, { name: 'c', peerAddress: '127.0.0.1:2399' }])).not.toBe(id);
    expect(foundingClusterId(CA + 'x', FOUNDERS)).not.toBe(id);
    expect(id).not.toBe(legacyClusterId(CA));
  });
});

describe('clusterIdentity', () => {
  it.each([
    ['a founder at its first start: the founders\' id', { firstStart: true, founders: FOUNDERS }, foundingClusterId(CA, FOUNDERS)],
    ['a joiner at its first start: the id it was given', { firstStart: true, founders: [], joined: 'fedcba9876543210' }, 'fedcba9876543210'],
    ['a joiner admitted by a member of an earlier build (no id given): the legacy id', { firstStart: true, founders: [] }, legacyClusterId(CA)],
    ['a directory of an earlier build (not a first start, no id kept): the legacy id', { firstStart: false, founders: FOUNDERS }, legacyClusterId(CA)],
  ] as const)('%s, recorded and read back whatever the next start says', (_what, o, want) => {
    expect(clusterIdentity(dir, CA, o)).toBe(want);
    expect(readFileSync(join(dir, CLUSTER_ID_FILE), 'utf8')).toBe(`${want}\n`);
    // A later start with another member list (or none) keeps what was decided.
    expect(clusterIdentity(dir, CA, { firstStart: false, founders: FOUNDERS.slice(0, 1) })).toBe(want);
  });

  it('refuses a damaged record rather than guessing', () => {
    writeFileSync(join(dir, CLUSTER_ID_FILE), 'not an id\n');
    expect(() => clusterIdentity(dir, CA, { firstStart: false, founders: FOUNDERS })).toThrow(/does not hold a cluster id/);
  });
});
