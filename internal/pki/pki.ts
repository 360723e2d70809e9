// internal/pki/pki owns the data directory's PKI: on first start it generates the CA, the
// serving certificate, the admin client certificate and the service-account signing key pair
// under <data-dir>/pki (private keys mode 0600) and writes <data-dir>/admin.kubeconfig; later
// starts reuse what is there. The certificate library costs about 11 MB once loaded, so the
// built server generates in a short-lived child process (cmd/clusterd-pki) and never loads
// it; from sources (tests) it is imported on demand (runPkiHelper decides, for cluster-pki
// too). Imports: certificates (lazily).

import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface PkiPaths {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
  saKey: string;
  saPub: string;
}

export function pkiPaths(dataDir: string): PkiPaths {
  const dir = join(dataDir, 'pki');
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    serverCert: join(dir, 'apiserver.crt'),
    serverKey: join(dir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
    saKey: join(dir, 'sa.key'),
    saPub: join(dir, 'sa.pub'),
  };
}

const writePrivate = (path: string, pem: string) => {
  writeFileSync(path, pem, { mode: 0o600 });
  chmodSync(path, 0o600); // mode is ignored when the file existed
};

/**
 * The kubernetes Service's cluster IP (the first address of the service range; the endpoints
 * controller gives the Service this address): in-cluster clients dial it
 * (KUBERNETES_SERVICE_HOST), so serving certificates name it, as upstream's do. Defined here,
 * where the PKI code loads no controller code; the endpoints controller imports it.
 */
export const KUBERNETES_SERVICE_IP = '10.96.0.1';

/** SANs of the serving certificate: loopback names, the host name, the kubernetes Service's names and address, and the bind address. */
export function servingNames(bindAddress: string): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames = [...new Set(['localhost', hostname(), 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'])];
  const ipAddresses = ['127.0.0.1', '::1', KUBERNETES_SERVICE_IP];
  if (bindAddress !== '0.0.0.0' && bindAddress !== '::' && !ipAddresses.includes(bindAddress)) ipAddresses.push(bindAddress);
  return { dnsNames, ipAddresses };
}

const complete = (p: PkiPaths): boolean =>
  [p.caCert, p.caKey, p.serverCert, p.serverKey, p.adminCert, p.adminKey, p.saKey, p.saPub].every((f) => existsSync(f));

/** Generates whatever is missing; returns the paths. Idempotent. */
export async function ensurePki(dataDir: string, bindAddress: string): Promise<PkiPaths> {
  const p = pkiPaths(dataDir);
  if (complete(p)) return p;
  const helper = runPkiHelper([`--data-dir=${dataDir}`, `--bind-address=${bindAddress}`]);
  if (!helper) return generatePki(dataDir, bindAddress);
  await helper.catch((e: Error) => {
    throw new Error(`generating certificates failed: ${e.message}`);
  });
  return p;
}

/**
 * Runs cmd/clusterd-pki with `args` (and `input` on its stdin) when the project is built, and
 * resolves with its stdout; rejects with its stderr (or exit status) when it fails. Undefined
 * when running from sources: the caller then generates in-process.
 */
export function runPkiHelper(args: string[], input?: string): Promise<string> | undefined {
  const helper = fileURLToPath(new URL('../../cmd/clusterd-pki/main.js', import.meta.url));
  // Compiled: tsc's .js, or the server bundle's .cjs (tools/bundle-server).
  if (!((import.meta.url.endsWith('.js') || import.meta.url.endsWith('.cjs')) && existsSync(helper))) return undefined;
  return new Promise<string>((resolve, reject) => {
    // Required here: a start with its certificates in place never loads child_process.
    const { spawn } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
    const child = spawn(process.execPath, [helper, ...args], { stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(stderr || `exit ${code}`))));
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** The generation itself (run by cmd/clusterd-pki, or in-process from sources). */
export async function generatePki(dataDir: string, bindAddress: string): Promise<PkiPaths> {
  const { createCertificateAuthority, issueCertificate, loadCertificateAuthority } = await import('./certificates.js');
  const p = pkiPaths(dataDir);
  mkdirSync(p.dir, { recursive: true, mode: 0o700 });
  let ca;
  if (existsSync(p.caCert) && existsSync(p.caKey)) {
    ca = await loadCertificateAuthority(readFileSync(p.caCert, 'utf8'), readFileSync(p.caKey, 'utf8'));
  } else {
    ca = await createCertificateAuthority('clusterd-ca');
    writeFileSync(p.caCert, ca.certPem);
    writePrivate(p.caKey, ca.keyPem);
  }
  if (!existsSync(p.serverCert) || !existsSync(p.serverKey)) {
    const server = await issueCertificate(ca, { commonName: 'clusterd-apiserver', usage: 'server', ...servingNames(bindAddress) });
    writeFileSync(p.serverCert, server.certPem);
    writePrivate(p.serverKey, server.keyPem);
  }
  if (!existsSync(p.adminCert) || !existsSync(p.adminKey)) {
    const admin = await issueCertificate(ca, { commonName: 'admin', organizations: ['system:masters'], usage: 'client' });
    writeFileSync(p.adminCert, admin.certPem);
    writePrivate(p.adminKey, admin.keyPem);
  }
  if (!existsSync(p.saKey) || !existsSync(p.saPub)) {
    const sa = serviceAccountKeyPair();
    writePrivate(p.saKey, sa.keyPem);
    writeFileSync(p.saPub, sa.pubPem);
  }
  return p;
}

/** A new service-account token signing key pair: PKCS#8 private key, SPKI public key. */
export function serviceAccountKeyPair(): { keyPem: string; pubPem: string } {
  // ES256 service-account tokens: upstream signs with RSA or ECDSA keys alike, and a P-256
  // key takes a millisecond where RSA-2048 takes a good part of the start-up budget.
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { keyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), pubPem: publicKey.export({ format: 'pem', type: 'spki' }).toString() };
}

export interface KubeconfigOptions {
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  user?: string;
  cluster?: string;
}

/** A kubeconfig with the credentials embedded, so it works from any directory. */
export function kubeconfigText(o: KubeconfigOptions): string {
  const cluster = o.cluster ?? 'clusterd';
  const user = o.user ?? 'admin';
  return multiKubeconfigText({ ...o, user, servers: [{ cluster, server: o.server, context: `${user}@${cluster}` }] });
}

/**
 * kubeconfigText with several servers (the replicas of a cluster): a cluster and a context each,
 * one user, the first context current.
 */
export function multiKubeconfigText(o: Omit<KubeconfigOptions, 'server' | 'cluster'> & { servers: readonly { cluster: string; server: string; context: string }[] }): string {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  const user = o.user ?? 'admin';
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    ...o.servers.flatMap((s) => [`- name: ${s.cluster}`, '  cluster:', `    server: ${s.server}`, `    certificate-authority-data: ${b64(o.caPem)}`]),
    'users:',
    `- name: ${user}`,
    '  user:',
    `    client-certificate-data: ${b64(o.certPem)}`,
    `    client-key-data: ${b64(o.keyPem)}`,
    'contexts:',
    ...o.servers.flatMap((s) => [`- name: ${s.context}`, '  context:', `    cluster: ${s.cluster}`, `    user: ${user}`]),
    `current-context: ${o.servers[0]?.context ?? ''}`,
    'preferences: {}',
    '',
  ].join('\n');
}

export function writeAdminKubeconfig(dataDir: string, paths: PkiPaths, server: string): string {
  const path = join(dataDir, 'admin.kubeconfig');
  writePrivate(
    path,
    kubeconfigText({
      server,
      caPem: readFileSync(paths.caCert, 'utf8'),
      certPem: readFileSync(paths.adminCert, 'utf8'),
      keyPem: readFileSync(paths.adminKey, 'utf8'),
    }),
  );
  return path;
}
