// internal/pki/cluster-pki owns a multi-replica cluster's PKI directory, made once and copied to
// every replica: the cluster CA (serving and client certificates), a separate peer CA (Raft
// transport certificates only, so that no client certificate can ever act as a peer), the
// service-account key pair, the admin client certificate, the join token, and one serving and
// one peer certificate per replica under replicas/<name>. Generation is idempotent: what exists
// is kept (and checked), what is missing is added. As in pki.ts, the certificate library stays
// out of the server: built, the work runs in cmd/clusterd-pki; from sources, in-process.
// Imports: pki (paths type, helper process, service-account keys), join-token; certificates and cluster/ids lazily (both load
// @peculiar/x509).

import {
  chmodSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync,
} from 'node:fs';
import { createPrivateKey, createPublicKey, randomBytes, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { join, relative, resolve } from 'node:path';
import { KUBERNETES_SERVICE_IP, runPkiHelper, serviceAccountKeyPair, type PkiPaths } from './pki.js';
import { makeJoinToken, parseJoinToken, verifyCaHash } from './join-token.js';
import type { CertificateAuthority, IssueOptions, KeyPairPem } from './certificates.js';

export interface ReplicaSpec {
  /** Must match REPLICA_NAME of internal/cluster/ids.ts. */
  name: string;
  /** IP addresses and DNS names the replica is reached at (its API and peer addresses). */
  hosts: string[];
}

/** Every file of one replica's view of the cluster PKI directory. */
export interface ClusterPkiPaths extends PkiPaths {
  /** replicas/<name>: serverCert, serverKey, peerCert and peerKey live here. */
  replicaDir: string;
  peerCaCert: string;
  peerCaKey: string;
  peerCert: string;
  peerKey: string;
  joinToken: string;
}

export interface ClusterPkiResult {
  dir: string;
  /** The paths of each replica asked for, in the order asked. */
  replicas: ClusterPkiPaths[];
  /** Files this call created (absolute); files that existed were kept and are not listed. */
  written: string[];
  /** Kept files that do not match the request (hosts missing from a certificate, loose modes). */
  warnings: string[];
}

/** What cmd/clusterd-pki reads on stdin in its `cluster` mode. */
export interface ClusterPkiRequest {
  /** generate: the whole directory; issue: only the replicas' certificates, CAs must exist. */
  op: 'generate' | 'issue';
  dir: string;
  replicas: ReplicaSpec[];
}

export function clusterPkiPaths(dir: string, name: string): ClusterPkiPaths {
  // The full name rule (REPLICA_NAME) lives in cluster/ids, whose import loads the certificate
  // library; here it is enough that a name cannot lead out of replicas/.
  if (!name || name === '.' || name === '..' || /[/\\]/.test(name)) throw new Error(`invalid replica name "${name}"`);
  const replicaDir = join(dir, 'replicas', name);
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    serverCert: join(replicaDir, 'apiserver.crt'),
    serverKey: join(replicaDir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
    saKey: join(dir, 'sa.key'),
    saPub: join(dir, 'sa.pub'),
    replicaDir,
    peerCaCert: join(dir, 'peer-ca.crt'),
    peerCaKey: join(dir, 'peer-ca.key'),
    peerCert: join(replicaDir, 'peer.crt'),
    peerKey: join(replicaDir, 'peer.key'),
    joinToken: join(dir, 'join-token'),
  };
}

// RFC 1123 host names, as certificate DNS SANs and Go's TLS verification accept them.
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/i;

/** Splits hosts into IP and DNS SANs; throws for anything that is neither (a URL, host:port). */
export function classifyHosts(hosts: readonly string[]): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const raw of hosts) {
    const host = /^\[.*\]$/.test(raw) ? raw.slice(1, -1) : raw;
    if (isIP(host)) ipAddresses.push(host);
    else if (host.length <= 253 && host.split('.').every((l) => DNS_LABEL.test(l))) dnsNames.push(host.toLowerCase());
    else throw new Error(`host "${raw}" is neither an IP address nor a DNS name${/[:/]/.test(raw) ? ' (give the bare host, without scheme or port)' : ''}`);
  }
  return { dnsNames: [...new Set(dnsNames)], ipAddresses: [...new Set(ipAddresses)] };
}

const LOOPBACK_IPS = ['127.0.0.1', '::1'];

/**
 * SANs of a replica's serving certificate: loopback, the replica's name (its host name under
 * compose and StatefulSets), the in-cluster service names and address, and every host given.
 */
export function replicaServingNames(name: string, hosts: readonly string[]): { dnsNames: string[]; ipAddresses: string[] } {
  const given = classifyHosts(hosts);
  return {
    dnsNames: [...new Set(['localhost', name, 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local', ...given.dnsNames])],
    ipAddresses: [...new Set([...LOOPBACK_IPS, KUBERNETES_SERVICE_IP, ...given.ipAddresses])],
  };
}

/** SANs of a replica's peer certificate: loopback, the replica's name and every host given. */
export function replicaPeerNames(name: string, hosts: readonly string[]): { dnsNames: string[]; ipAddresses: string[] } {
  const given = classifyHosts(hosts);
  return {
    dnsNames: [...new Set(['localhost', name, ...given.dnsNames])],
    ipAddresses: [...new Set([...LOOPBACK_IPS, ...given.ipAddresses])],
  };
}

/** Creates the directory, or adds the replicas missing from it. Idempotent. */
export function generateClusterPki(outDir: string, replicas: ReplicaSpec[]): Promise<ClusterPkiResult> {
  return run({ op: 'generate', dir: resolve(outDir), replicas });
}

/**
 * Adds one replica's serving and peer certificates to an existing directory (a member admitting
 * a joining replica); a replica that already has them keeps them.
 */
export function issueReplicaCertificates(dir: string, name: string, hosts: string[]): Promise<ClusterPkiResult> {
  return run({ op: 'issue', dir: resolve(dir), replicas: [{ name, hosts }] });
}

async function run(request: ClusterPkiRequest): Promise<ClusterPkiResult> {
  const helper = runPkiHelper(['cluster'], JSON.stringify(request));
  if (!helper) return writeClusterPki(request);
  const stdout = await helper.catch((e: Error) => {
    throw new Error(e.message.trim().replace(/^clusterd-pki: /, ''));
  });
  try {
    return JSON.parse(stdout) as ClusterPkiResult;
  } catch {
    throw new Error('generating certificates: cmd/clusterd-pki answered something other than JSON');
  }
}

/** Writes `data` so that the file appears whole or not at all, with `mode` from the start. */
export function writeAtomic(path: string, data: string, mode: number): void {
  const tmp = `${path}.tmp-${randomBytes(4).toString('hex')}`;
  const fd = openSync(tmp, 'wx', mode);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(tmp, mode); // the umask may have narrowed the mode given to open
  renameSync(tmp, path);
}

class Writer {
  readonly written: string[] = [];
  readonly warnings: string[] = [];
  constructor(readonly dir: string) {}
  rel(path: string): string {
    return relative(this.dir, path) || '.';
  }
  file(path: string, data: string, secret: boolean): void {
    writeAtomic(path, data, secret ? 0o600 : 0o644);
    this.written.push(path);
  }
  pair(certPath: string, keyPath: string, pem: KeyPairPem): void {
    // Key first: a run interrupted in between leaves a key without its certificate, which the
    // next run reissues, never a certificate whose key is lost.
    this.file(keyPath, pem.keyPem, true);
    this.file(certPath, pem.certPem, false);
  }
  checkPrivate(path: string): void {
    if (statSync(path).mode & 0o077) this.warnings.push(`${this.rel(path)} is readable by group or others (chmod 600 ${path})`);
  }
  mkdir(path: string): void {
    if (existsSync(path)) {
      if (!statSync(path).isDirectory()) throw new Error(`${path} exists and is not a directory`);
      if (statSync(path).mode & 0o077) this.warnings.push(`${this.rel(path)}/ is accessible to group or others; it holds private keys (chmod 700 ${path})`);
      return;
    }
    mkdirSync(path, { recursive: true, mode: 0o700 });
    chmodSync(path, 0o700);
  }
}

type Certificates = typeof import('./certificates.js');
type Ids = typeof import('../cluster/ids.js');

/** The generation itself (run by cmd/clusterd-pki, or in-process from sources). */
export async function writeClusterPki(request: ClusterPkiRequest): Promise<ClusterPkiResult> {
  const [certs, ids] = await Promise.all([import('./certificates.js'), import('../cluster/ids.js')]);
  const dir = resolve(request.dir);
  const seen = new Set<string>();
  for (const r of request.replicas) {
    if (!ids.REPLICA_NAME.test(r.name)) {
      throw new Error(`invalid replica name "${r.name}": lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters`);
    }
    if (seen.has(r.name)) throw new Error(`replica "${r.name}" is given twice`);
    seen.add(r.name);
    classifyHosts(r.hosts);
  }

  const w = new Writer(dir);
  const shared = clusterPkiPaths(dir, '_');
  if (request.op === 'issue') {
    const missing = [shared.caCert, shared.caKey, shared.peerCaCert, shared.peerCaKey].filter((f) => !existsSync(f));
    if (missing.length) throw new Error(`${dir} is not a cluster PKI directory: ${missing.map((f) => w.rel(f)).join(', ')} missing (make one with clusterd pki)`);
  }
  w.mkdir(dir);
  const ca = await ensureCa(w, certs, shared.caCert, shared.caKey, 'clusterd-ca');
  const peerCa = await ensureCa(w, certs, shared.peerCaCert, shared.peerCaKey, 'clusterd-peer-ca');
  if (request.op === 'generate') {
    await ensureLeaf(w, certs, ca, shared.caCert, shared.adminCert, shared.adminKey, { commonName: 'admin', organizations: ['system:masters'], usage: 'client' });
    ensureServiceAccountKeys(w, shared.saKey, shared.saPub);
    // The joiner reaches a member's API port first, whose serving certificate the cluster CA signs:
    // that is the CA it must be able to pin before it sends the token's secret.
    ensureJoinToken(w, shared.joinToken, shared.caCert, ca.certPem);
  }
  if (request.replicas.length) w.mkdir(join(dir, 'replicas'));
  const replicas: ClusterPkiPaths[] = [];
  for (const r of request.replicas) {
    const p = clusterPkiPaths(dir, r.name);
    await ensureReplica(w, certs, ids, ca, peerCa, p, r);
    replicas.push(p);
  }
  return { dir, replicas, written: w.written, warnings: w.warnings };
}

async function ensureCa(w: Writer, certs: Certificates, certPath: string, keyPath: string, commonName: string): Promise<CertificateAuthority> {
  const haveCert = existsSync(certPath);
  if (haveCert && existsSync(keyPath)) {
    w.checkPrivate(keyPath);
    const certPem = readFileSync(certPath, 'utf8');
    const keyPem = readFileSync(keyPath, 'utf8');
    if (!new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem))) throw new Error(`${w.rel(keyPath)} is not the key of ${w.rel(certPath)}`);
    return certs.loadCertificateAuthority(certPem, keyPem);
  }
  if (haveCert) {
    throw new Error(
      `${w.rel(certPath)} exists without ${w.rel(keyPath)}: nothing can be signed with it, and replacing it would orphan every certificate it signed ` +
        `(restore the key, or start over in an empty directory)`,
    );
  }
  // Only the key (an interrupted run: the certificate is written last) or nothing: nothing can
  // have been signed by it, so a new CA replaces it.
  const ca = await certs.createCertificateAuthority(commonName);
  w.pair(certPath, keyPath, ca);
  return ca;
}

/** Keeps a complete pair that chains to `ca` (else refuses); issues both when either is missing. */
async function ensureLeaf(
  w: Writer, certs: Certificates, ca: CertificateAuthority, caPath: string, certPath: string, keyPath: string, options: IssueOptions,
): Promise<X509Certificate | undefined> {
  if (existsSync(certPath) && existsSync(keyPath)) {
    w.checkPrivate(keyPath);
    const cert = new X509Certificate(readFileSync(certPath));
    const redo = `delete ${w.rel(certPath)} and ${w.rel(keyPath)} to have them issued again`;
    if (!cert.checkIssued(new X509Certificate(ca.certPem)) || !cert.verify(new X509Certificate(ca.certPem).publicKey)) {
      throw new Error(`${w.rel(certPath)} is not signed by ${w.rel(caPath)} (${redo})`);
    }
    if (!cert.checkPrivateKey(createPrivateKey(readFileSync(keyPath)))) throw new Error(`${w.rel(keyPath)} is not the key of ${w.rel(certPath)} (${redo})`);
    return cert;
  }
  w.pair(certPath, keyPath, await certs.issueCertificate(ca, options));
  return undefined;
}

function ensureServiceAccountKeys(w: Writer, keyPath: string, pubPath: string): void {
  if (existsSync(keyPath)) {
    w.checkPrivate(keyPath);
    // A lost public key is derived again, so tokens signed with the existing key stay valid.
    if (!existsSync(pubPath)) w.file(pubPath, createPublicKey(readFileSync(keyPath)).export({ format: 'pem', type: 'spki' }).toString(), false);
    return;
  }
  const sa = serviceAccountKeyPair();
  w.file(keyPath, sa.keyPem, true);
  w.file(pubPath, sa.pubPem, false);
}

function ensureJoinToken(w: Writer, tokenPath: string, caPath: string, caPem: string): void {
  if (!existsSync(tokenPath)) return w.file(tokenPath, makeJoinToken(caPem) + '\n', true);
  w.checkPrivate(tokenPath);
  let caHash: string;
  try {
    ({ caHash } = parseJoinToken(readFileSync(tokenPath, 'utf8')));
  } catch (e) {
    throw new Error(`${w.rel(tokenPath)}: ${(e as Error).message} (delete it to have a new one made)`);
  }
  if (!verifyCaHash(caPem, caHash)) {
    throw new Error(`${w.rel(tokenPath)} pins a different CA than ${w.rel(caPath)} (delete it to have a new one made)`);
  }
}

async function ensureReplica(
  w: Writer, certs: Certificates, ids: Ids, ca: CertificateAuthority, peerCa: CertificateAuthority, p: ClusterPkiPaths, r: ReplicaSpec,
): Promise<void> {
  const serving: IssueOptions = { commonName: 'clusterd-apiserver', usage: 'server', ...replicaServingNames(r.name, r.hosts) };
  const peer: IssueOptions = { commonName: ids.peerCommonNameOf(r.name), usage: 'both', ...replicaPeerNames(r.name, r.hosts) };
  if (!existsSync(p.replicaDir)) {
    // A new replica is assembled aside and renamed into place, so that two members admitting
    // the same joiner at once cannot leave one's key beside the other's certificate.
    const tmp = `${p.replicaDir}.tmp-${randomBytes(4).toString('hex')}`;
    mkdirSync(tmp, { mode: 0o700 });
    chmodSync(tmp, 0o700);
    try {
      const files: Array<[string, string, boolean]> = [];
      const s = await certs.issueCertificate(ca, serving);
      const q = await certs.issueCertificate(peerCa, peer);
      files.push([p.serverKey, s.keyPem, true], [p.serverCert, s.certPem, false], [p.peerKey, q.keyPem, true], [p.peerCert, q.certPem, false]);
      for (const [path, data, secret] of files) writeAtomic(join(tmp, relative(p.replicaDir, path)), data, secret ? 0o600 : 0o644);
      try {
        renameSync(tmp, p.replicaDir);
        w.written.push(...files.map(([path]) => path));
        return;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
        // Someone else made it first: theirs is kept and checked below.
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  w.mkdir(p.replicaDir);
  const servingCert = await ensureLeaf(w, certs, ca, p.caCert, p.serverCert, p.serverKey, serving);
  const peerCert = await ensureLeaf(w, certs, peerCa, p.peerCaCert, p.peerCert, p.peerKey, peer);
  if (peerCert && !peerCert.subject.split('\n').includes(`CN=${peer.commonName}`)) {
    throw new Error(`${w.rel(p.peerCert)} names ${peerCert.subject.replace(/\n/g, ', ')}, not CN=${peer.commonName} as replica ${r.name} needs (delete ${w.rel(p.replicaDir)} to have it issued again)`);
  }
  for (const [cert, path] of [[servingCert, p.serverCert], [peerCert, p.peerCert]] as const) {
    if (!cert) continue;
    const { dnsNames, ipAddresses } = classifyHosts(r.hosts);
    const missing = [
      ...dnsNames.filter((h) => cert.checkHost(h, { subject: 'never', wildcards: false }) === undefined),
      ...ipAddresses.filter((ip) => cert.checkIP(ip) === undefined),
    ];
    if (missing.length) {
      w.warnings.push(`${w.rel(path)} was kept and does not name ${missing.join(', ')} (delete ${w.rel(p.replicaDir)} to have the replica's certificates issued again)`);
    }
  }
}
