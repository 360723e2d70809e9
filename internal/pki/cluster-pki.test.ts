import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import {
  chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, unlinkSync, writeFileSync,
} from 'node:fs';
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { spawnModule } from '../../raft/launch/spawn-module.js';
import { peerCommonNameOf } from '../cluster/ids.js';
import {
  classifyHosts, clusterPkiPaths, generateClusterPki, issueReplicaCertificates, type ClusterPkiPaths, type ClusterPkiResult,
} from './cluster-pki.js';
import { parseJoinToken, verifyCaHash } from './join-token.js';

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'clusterd-cluster-pki-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const cert = (path: string) => new X509Certificate(readFileSync(path));
const mode = (path: string) => statSync(path).mode & 0o777;
const keyOf = (path: string) => createPrivateKey(readFileSync(path));
/** Every file under `root` with its contents, to show that a second run changes nothing. */
const snapshot = (root: string): Map<string, string> => {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(p, readFileSync(p, 'utf8'));
    }
  };
  walk(root);
  return out;
};

describe('generateClusterPki', () => {
  it('writes the layout: two CAs, admin, service-account keys, join token, serving and peer certificates per replica', async () => {
    const out = join(dir, 'pki');
    const result = await generateClusterPki(out, [
      { name: 'a', hosts: ['10.0.0.1', 'a.example.com'] },
      { name: 'b', hosts: ['fd00::2', '[fd00::3]', 'B.Example.com'] },
    ]);
    const a = clusterPkiPaths(out, 'a');
    const b = clusterPkiPaths(out, 'b');
    expect(result.dir).toBe(out);
    expect(result.replicas).toEqual([a, b]);
    expect(result.warnings).toEqual([]);
    const files = [
      a.caCert, a.caKey, a.saKey, a.saPub, a.adminCert, a.adminKey, a.peerCaCert, a.peerCaKey, a.joinToken,
      a.serverCert, a.serverKey, a.peerCert, a.peerKey, b.serverCert, b.serverKey, b.peerCert, b.peerKey,
    ];
    expect(new Set(result.written)).toEqual(new Set(files));
    expect([...snapshot(out).keys()].sort()).toEqual([...files].sort());
    expect(a.serverCert).toBe(join(out, 'replicas', 'a', 'apiserver.crt'));
    expect(a.peerKey).toBe(join(out, 'replicas', 'a', 'peer.key'));

    for (const key of [a.caKey, a.peerCaKey, a.saKey, a.adminKey, a.joinToken, a.serverKey, a.peerKey, b.serverKey, b.peerKey]) {
      expect(mode(key), key).toBe(0o600);
    }
    for (const d of [out, join(out, 'replicas'), a.replicaDir, b.replicaDir]) expect(mode(d), d).toBe(0o700);

    const ca = cert(a.caCert);
    const peerCa = cert(a.peerCaCert);
    expect(ca.ca && peerCa.ca).toBe(true);
    expect(ca.publicKey.equals(peerCa.publicKey)).toBe(false);

    // Serving: signed by the cluster CA only, loopback + name + service names + given hosts.
    const serving = cert(b.serverCert);
    expect(serving.verify(ca.publicKey)).toBe(true);
    expect(serving.verify(peerCa.publicKey)).toBe(false);
    expect(serving.keyUsage).toEqual([SERVER_AUTH]);
    for (const san of [
      'DNS:localhost', 'DNS:b', 'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc',
      'DNS:kubernetes.default.svc.cluster.local', 'DNS:b.example.com', 'IP Address:127.0.0.1', 'IP Address:0:0:0:0:0:0:0:1',
      'IP Address:FD00:0:0:0:0:0:0:2', 'IP Address:FD00:0:0:0:0:0:0:3',
      // The kubernetes Service's cluster IP: what in-cluster clients dial (KUBERNETES_SERVICE_HOST).
      'IP Address:10.96.0.1',
    ]) {
      expect(serving.subjectAltName).toContain(san);
    }
    expect(serving.subjectAltName).not.toContain('10.0.0.1');
    expect(cert(a.serverCert).subjectAltName).toContain('IP Address:10.0.0.1');
    expect(cert(a.serverCert).subjectAltName).toContain('DNS:a.example.com');

    // Peer: signed by the peer CA only, CN from the replica name, server and client usage.
    const peer = cert(a.peerCert);
    expect(peer.verify(peerCa.publicKey)).toBe(true);
    expect(peer.verify(ca.publicKey)).toBe(false);
    expect(peer.subject).toBe(`CN=${peerCommonNameOf('a')}`);
    expect(cert(b.peerCert).subject).toBe(`CN=${peerCommonNameOf('b')}`);
    expect(peer.keyUsage.sort()).toEqual([SERVER_AUTH, CLIENT_AUTH].sort());
    expect(peer.subjectAltName).toContain('IP Address:10.0.0.1');
    expect(peer.subjectAltName).toContain('DNS:a.example.com');
    expect(peer.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(peer.subjectAltName).not.toContain('kubernetes');

    const admin = cert(a.adminCert);
    expect(admin.verify(ca.publicKey)).toBe(true);
    expect(admin.subject).toContain('CN=admin');
    expect(admin.subject).toContain('O=system:masters');
    expect(admin.keyUsage).toEqual([CLIENT_AUTH]);

    expect(readFileSync(a.saPub, 'utf8')).toContain('BEGIN PUBLIC KEY');
    expect(createPublicKey(readFileSync(a.saKey)).export({ format: 'pem', type: 'spki' })).toBe(readFileSync(a.saPub, 'utf8'));

    const token = parseJoinToken(readFileSync(a.joinToken, 'utf8'));
    expect(verifyCaHash(readFileSync(a.caCert, 'utf8'), token.caHash)).toBe(true);
    expect(verifyCaHash(readFileSync(a.peerCaCert, 'utf8'), token.caHash)).toBe(false);
  });

  it('is idempotent and adds only the missing replicas', async () => {
    await generateClusterPki(dir, [{ name: 'a', hosts: ['10.0.0.1'] }]);
    const before = snapshot(dir);
    const again = await generateClusterPki(dir, [{ name: 'a', hosts: ['10.0.0.1'] }]);
    expect(again.written).toEqual([]);
    expect(snapshot(dir)).toEqual(before);

    const more = await generateClusterPki(dir, [{ name: 'a', hosts: ['10.0.0.1'] }, { name: 'c', hosts: ['10.0.0.3'] }]);
    const c = clusterPkiPaths(dir, 'c');
    expect(new Set(more.written)).toEqual(new Set([c.serverCert, c.serverKey, c.peerCert, c.peerKey]));
    const after = snapshot(dir);
    for (const [path, text] of before) expect(after.get(path)).toBe(text);
    expect(cert(c.serverCert).verify(cert(c.caCert).publicKey)).toBe(true);
    expect(cert(c.peerCert).verify(cert(c.peerCaCert).publicKey)).toBe(true);
    // No assembly directories are left behind.
    expect(readdirSync(join(dir, 'replicas')).sort()).toEqual(['a', 'c']);
  });

  it('keeps a replica whose hosts changed, and says which hosts its certificates lack', async () => {
    await generateClusterPki(dir, [{ name: 'a', hosts: ['10.0.0.1'] }]);
    const before = readFileSync(clusterPkiPaths(dir, 'a').serverCert, 'utf8');
    const result = await generateClusterPki(dir, [{ name: 'a', hosts: ['10.0.0.1', '10.0.0.9', 'a.example.com'] }]);
    expect(result.written).toEqual([]);
    expect(readFileSync(clusterPkiPaths(dir, 'a').serverCert, 'utf8')).toBe(before);
    expect(result.warnings).toEqual([
      'replicas/a/apiserver.crt was kept and does not name a.example.com, 10.0.0.9 (delete replicas/a to have the replica\'s certificates issued again)',
      'replicas/a/peer.crt was kept and does not name a.example.com, 10.0.0.9 (delete replicas/a to have the replica\'s certificates issued again)',
    ]);
  });

  it('refuses bad input before writing anything', async () => {
    const out = join(dir, 'pki');
    await expect(generateClusterPki(out, [{ name: 'A', hosts: [] }])).rejects.toThrow(/invalid replica name "A"/);
    await expect(generateClusterPki(out, [{ name: '-a', hosts: [] }])).rejects.toThrow(/invalid replica name "-a"/);
    await expect(generateClusterPki(out, [{ name: '../x', hosts: [] }])).rejects.toThrow(/invalid replica name/);
    await expect(generateClusterPki(out, [{ name: 'a', hosts: [] }, { name: 'a', hosts: [] }])).rejects.toThrow(/"a" is given twice/);
    await expect(generateClusterPki(out, [{ name: 'a', hosts: ['10.0.0.1:6443'] }])).rejects.toThrow(/"10.0.0.1:6443" is neither an IP address nor a DNS name \(give the bare host/);
    expect(existsSync(out)).toBe(false);
  });

  it('reissues a pair an interrupted run left half written, and derives a lost sa.pub from sa.key', async () => {
    await generateClusterPki(dir, [{ name: 'a', hosts: [] }]);
    const p = clusterPkiPaths(dir, 'a');
    const saPub = readFileSync(p.saPub, 'utf8');
    unlinkSync(p.peerCert);
    unlinkSync(p.adminKey);
    unlinkSync(p.saPub);
    const result = await generateClusterPki(dir, [{ name: 'a', hosts: [] }]);
    expect(new Set(result.written)).toEqual(new Set([p.peerCert, p.peerKey, p.adminCert, p.adminKey, p.saPub]));
    expect(readFileSync(p.saPub, 'utf8')).toBe(saPub);
    expect(cert(p.peerCert).checkPrivateKey(keyOf(p.peerKey))).toBe(true);
  });

  it('refuses to replace a CA whose key is lost, or to keep what another CA signed, saying what to delete', async () => {
    await generateClusterPki(dir, [{ name: 'a', hosts: [] }]);
    const p = clusterPkiPaths(dir, 'a');
    const other = mkdtempSync(join(tmpdir(), 'clusterd-cluster-pki-other-'));
    try {
      await generateClusterPki(other, [{ name: 'a', hosts: [] }]);
      const q = clusterPkiPaths(other, 'a');
      copyFileSync(q.peerCert, p.peerCert);
      copyFileSync(q.peerKey, p.peerKey);
      await expect(generateClusterPki(dir, [{ name: 'a', hosts: [] }])).rejects.toThrow(
        'replicas/a/peer.crt is not signed by peer-ca.crt (delete replicas/a/peer.crt and replicas/a/peer.key to have them issued again)',
      );
      copyFileSync(q.joinToken, p.joinToken);
      await expect(generateClusterPki(dir, [])).rejects.toThrow('join-token pins a different CA than ca.crt (delete it to have a new one made)');
      writeFileSync(p.joinToken, 'K10abc::def\n');
      await expect(generateClusterPki(dir, [])).rejects.toThrow(/^join-token: join token's CA hash must be 64 hex digits/);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
    unlinkSync(p.caKey);
    await expect(generateClusterPki(dir, [])).rejects.toThrow(/^ca.crt exists without ca.key: nothing can be signed with it/);
  });

  it('warns about a pre-existing output directory that others can read', async () => {
    mkdirSync(join(dir, 'open'), { mode: 0o755 });
    chmodSync(join(dir, 'open'), 0o755);
    const result = await generateClusterPki(join(dir, 'open'), []);
    expect(result.warnings).toEqual([`./ is accessible to group or others; it holds private keys (chmod 700 ${join(dir, 'open')})`]);
    expect(mode(join(dir, 'open'))).toBe(0o755); // an existing directory is the operator's to change
  });
});

describe('issueReplicaCertificates', () => {
  it('adds one replica to an existing directory, touching nothing else', async () => {
    await generateClusterPki(dir, [{ name: 'a', hosts: ['10.0.0.1'] }]);
    const before = snapshot(dir);
    const result: ClusterPkiResult = await issueReplicaCertificates(dir, 'd', ['10.0.0.4', 'd.example.com']);
    const d: ClusterPkiPaths = clusterPkiPaths(dir, 'd');
    expect(result.replicas).toEqual([d]);
    expect(new Set(result.written)).toEqual(new Set([d.serverCert, d.serverKey, d.peerCert, d.peerKey]));
    for (const [path, text] of before) expect(readFileSync(path, 'utf8')).toBe(text);
    expect(cert(d.peerCert).subject).toBe(`CN=${peerCommonNameOf('d')}`);
    expect(cert(d.peerCert).subjectAltName).toContain('DNS:d.example.com');
    expect((await issueReplicaCertificates(dir, 'd', ['10.0.0.4'])).written).toEqual([]);
  });

  it('refuses a directory without the CAs, and never creates them', async () => {
    await expect(issueReplicaCertificates(dir, 'a', [])).rejects.toThrow(
      `${dir} is not a cluster PKI directory: ca.crt, ca.key, peer-ca.crt, peer-ca.key missing (make one with clusterd pki)`,
    );
    expect(readdirSync(dir)).toEqual([]);
    await expect(issueReplicaCertificates(dir, 'Bad_Name', [])).rejects.toThrow(/invalid replica name "Bad_Name"/);
  });

  it('gives one consistent replica to concurrent callers', async () => {
    await generateClusterPki(dir, []);
    const results = await Promise.all([1, 2, 3].map(() => issueReplicaCertificates(dir, 'e', ['10.0.0.5'])));
    const p = clusterPkiPaths(dir, 'e');
    expect(results.filter((r) => r.written.length > 0)).toHaveLength(1);
    expect(cert(p.serverCert).checkPrivateKey(keyOf(p.serverKey))).toBe(true);
    expect(cert(p.peerCert).checkPrivateKey(keyOf(p.peerKey))).toBe(true);
    expect(readdirSync(join(dir, 'replicas'))).toEqual(['e']);
  });
});

describe('classifyHosts', () => {
  it('splits IPs from DNS names and refuses URLs, ports and junk', () => {
    expect(classifyHosts(['10.0.0.1', '::1', '[fd00::1]', 'Node-1.Example.com', 'node-1.example.com'])).toEqual({
      dnsNames: ['node-1.example.com'],
      ipAddresses: ['10.0.0.1', '::1', 'fd00::1'],
    });
    for (const bad of ['https://a', 'a:2380', 'a..b', '-a', 'a_b', '', 'x'.repeat(64)]) expect(() => classifyHosts([bad]), bad).toThrow(/neither an IP address nor a DNS name/);
  });
});

describe('the certificates in use', () => {
  // Mutual TLS as the Raft transport does it: trust only the peer CA, require a client certificate.
  /**
   * What the client read: 'ok' when both sides accept each other, the server's verdict on the
   * client certificate, or the client's error. The server verifies as the Raft transport does
   * (its CA only, a client certificate required) but reports instead of hanging up, so the test
   * sees why.
   */
  async function peerHandshake(server: { cert: string; key: string; ca: string }, client: { cert: string; key: string; ca: string }, host: string) {
    const srv = tls.createServer({ ...server, requestCert: true, rejectUnauthorized: false }, (s) =>
      s.end(s.authorized ? 'ok' : `refused: ${String(s.authorizationError)}`),
    );
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    try {
      return await new Promise<string>((resolveHandshake) => {
        const socket = tls.connect({
          ...client, host: '127.0.0.1', port: (srv.address() as AddressInfo).port,
          servername: host === '127.0.0.1' ? undefined : host, checkServerIdentity: (_h, c) => tls.checkServerIdentity(host, c),
        });
        let data = '';
        socket.on('data', (d: Buffer) => (data += String(d)));
        socket.on('end', () => resolveHandshake(data));
        // TLS 1.3 reports the server's refusal of a client certificate after the client's handshake.
        socket.on('error', (e) => resolveHandshake(`error: ${e.message}`));
      });
    } finally {
      srv.close();
    }
  }

  it('let replicas authenticate each other as peers, and never let a client certificate act as a peer', async () => {
    await generateClusterPki(dir, [{ name: 'a', hosts: ['127.0.0.1'] }, { name: 'b', hosts: ['b.internal'] }]);
    const a = clusterPkiPaths(dir, 'a');
    const b = clusterPkiPaths(dir, 'b');
    const read = (p: string) => readFileSync(p, 'utf8');
    const peerA = { cert: read(a.peerCert), key: read(a.peerKey), ca: read(a.peerCaCert) };
    const peerB = { cert: read(b.peerCert), key: read(b.peerKey), ca: read(b.peerCaCert) };
    expect(await peerHandshake(peerA, peerB, '127.0.0.1')).toBe('ok');
    expect(await peerHandshake(peerB, peerA, 'b.internal')).toBe('ok');
    const admin = { cert: read(a.adminCert), key: read(a.adminKey), ca: read(a.peerCaCert) };
    expect(await peerHandshake(peerA, admin, '127.0.0.1')).toBe('refused: UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    // A serving certificate does not pass as a peer either.
    const server = { cert: read(b.serverCert), key: read(b.serverKey), ca: read(a.peerCaCert) };
    expect(await peerHandshake(peerA, server, '127.0.0.1')).toBe('refused: UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    // And the serving certificate is what a kubectl-like client accepts, by name and by address.
    const apiClient = { ca: read(a.caCert), cert: read(a.adminCert), key: read(a.adminKey) };
    const apiServer = { cert: read(a.serverCert), key: read(a.serverKey), ca: read(a.caCert) };
    expect(await peerHandshake(apiServer, apiClient, 'kubernetes.default.svc')).toBe('ok');
    expect(await peerHandshake(apiServer, apiClient, '127.0.0.1')).toBe('ok');
    expect(await peerHandshake(apiServer, apiClient, 'b.internal')).toMatch(/^error: .*Hostname\/IP does not match/);
  });
});

describe('cmd/clusterd-pki cluster mode', () => {
  const runHelper = (input: string, args: string[] = ['cluster']) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolveRun, reject) => {
      const child = spawnModule(import.meta.url, '../../cmd/clusterd-pki/main.ts', { args, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += String(d)));
      child.stderr!.on('data', (d: Buffer) => (stderr += String(d)));
      child.on('error', reject);
      child.on('exit', (code) => resolveRun({ code, stdout, stderr }));
      child.stdin!.end(input);
    });

  it('reads a request on stdin and answers the result on stdout; failures go to stderr with exit 1', async () => {
    const ok = await runHelper(JSON.stringify({ op: 'generate', dir, replicas: [{ name: 'a', hosts: ['10.0.0.1'] }] }));
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    const result = JSON.parse(ok.stdout) as ClusterPkiResult;
    expect(result.replicas).toEqual([clusterPkiPaths(dir, 'a')]);
    expect(result.written).toHaveLength(13);
    const bad = await runHelper(JSON.stringify({ op: 'issue', dir: join(dir, 'nothing'), replicas: [{ name: 'b', hosts: [] }] }));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^clusterd-pki: .*nothing is not a cluster PKI directory/);
  }, 60_000);

  it('explains its flags on --help and refuses unknown ones with exit 2', async () => {
    const help = await runHelper('', ['--help']);
    expect(help.code).toBe(0);
    for (const flag of ['--data-dir=DIR', '--bind-address=IP', 'cluster', '--help']) expect(help.stdout).toContain(flag);
    const unknown = await runHelper('', [`--data-dir=${join(dir, 'unused')}`, '--bind=1.2.3.4']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^clusterd-pki: unknown flag --bind\n/);
    const stray = await runHelper('', ['stray']);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toMatch(/^clusterd-pki: unexpected argument stray\n/);
  }, 60_000);
});
