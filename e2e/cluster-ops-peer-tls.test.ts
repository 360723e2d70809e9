// The peer (Raft) port of a real replica, as issue 13 §1 states it: peer traffic is mutual TLS
// from the cluster's peer CA; a certificate from another CA, or a client certificate (even the
// cluster CA's own admin one, or a replica's serving certificate), is refused. A genuine peer
// certificate of the cluster gets through (the replica speaks first: HTTP/2 settings).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterProcess } from './support/cluster-process.js';
import { PROJECT_ROOT } from './support/server-process.js';

/** Connects with a certificate; resolves with whether the replica answered with data before closing. */
function attempt(address: string, peerCa: string, cert: string, key: string): Promise<{ answered: boolean; closed: boolean; error?: string }> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  return new Promise((resolve) => {
    const socket = tls.connect({ host, port, ca: peerCa, cert, key, ALPNProtocols: ['h2'], checkServerIdentity: () => undefined });
    let error: string | undefined;
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('data', () => {
      socket.destroy();
      resolve({ answered: true, closed: false });
    });
    socket.on('close', () => resolve({ answered: false, closed: true, ...(error ? { error } : {}) }));
  });
}

describe('the peer port of a real replica', () => {
  let cluster: ClusterProcess;
  let otherPki: string;
  beforeAll(async () => {
    cluster = await ClusterProcess.started();
    otherPki = mkdtempSync(join(tmpdir(), 'clusterd-other-pki-'));
    const { generateClusterPki } = (await import(join(PROJECT_ROOT, 'dist', 'internal', 'pki', 'cluster-pki.js'))) as typeof import('../internal/pki/cluster-pki.js');
    await generateClusterPki(otherPki, cluster.names.map((name) => ({ name, hosts: ['127.0.0.1'] })));
  });
  afterAll(async () => {
    await cluster?.destroy();
    if (otherPki) rmSync(otherPki, { recursive: true, force: true });
  });

  it('refuses a certificate from another CA or a client certificate, and admits the cluster\'s peer certificate', async () => {
    const [target, claimed] = cluster.names;
    const pki = (dir: string, file: string) => readFileSync(join(dir, file), 'utf8');
    const peerCa = pki(cluster.pkiDir, 'peer-ca.crt');
    const cases: Array<[string, string, string, 'refused' | 'admitted']> = [
      ['the peer certificate of another cluster (another peer CA)', pki(otherPki, `replicas/${claimed}/peer.crt`), pki(otherPki, `replicas/${claimed}/peer.key`), 'refused'],
      ["the cluster CA's admin client certificate", pki(cluster.pkiDir, 'admin.crt'), pki(cluster.pkiDir, 'admin.key'), 'refused'],
      ["a replica's serving certificate (cluster CA)", pki(cluster.pkiDir, `replicas/${claimed}/apiserver.crt`), pki(cluster.pkiDir, `replicas/${claimed}/apiserver.key`), 'refused'],
      ["a member's own peer certificate", pki(cluster.pkiDir, `replicas/${claimed}/peer.crt`), pki(cluster.pkiDir, `replicas/${claimed}/peer.key`), 'admitted'],
    ];
    for (const [what, cert, key, want] of cases) {
      const r = await attempt(cluster.peerListenAddress(target!), peerCa, cert, key);
      expect(r.answered ? 'admitted' : 'refused', `${what}: ${JSON.stringify(r)}`).toBe(want);
    }
    expect(cluster.unexpectedExits).toEqual([]);
  });
});
