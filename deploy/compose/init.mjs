// The one-shot init service of deploy/docker-compose.yml: makes (or completes) the cluster PKI
// in the shared volume with `clusterd pki`, hands it to the server's user, and writes one admin
// kubeconfig per replica into the directory bind-mounted from the host. Runs as root in the
// clusterd image so that it can set ownership; the replicas run as `node`.
// Environment (set by the compose file): CLUSTERD_REPLICAS (names), and per replica i
// CLUSTERD_<i>_HOST (the address clients reach it at), CLUSTERD_<i>_PORT (its API port),
// CLUSTERD_<i>_PEER (its peer host:port); CLUSTERD_EXTRA_SANS (comma-separated further names
// and addresses for every replica's certificates).
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const PKI = '/pki';
const OUT = '/kubeconfig';
const NODE_UID = 1000;
const NODE_GID = 1000;

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const names = env('CLUSTERD_REPLICAS').split(',').filter(Boolean);
const extra = (process.env.CLUSTERD_EXTRA_SANS ?? '').split(',').filter(Boolean);
const replicas = names.map((name, i) => {
  const peer = env(`CLUSTERD_${i}_PEER`);
  return { name, host: env(`CLUSTERD_${i}_HOST`), port: env(`CLUSTERD_${i}_PORT`), peerHost: peer.slice(0, peer.lastIndexOf(':')).replace(/^\[|\]$/g, '') };
});

const pkiOut = execFileSync(
  '/app/bin/clusterd',
  ['pki', '--out', PKI, ...replicas.map((r) => `--replica=${r.name}=${[...new Set([r.host, r.peerHost, ...extra])].join(',')}`)],
  { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' },
);
// What it wrote or kept; its "Next:" guidance is for copying the PKI by hand, done here.
process.stdout.write(pkiOut.split('\nNext:')[0].trimEnd() + '\n');

const chownTree = (path) => {
  chownSync(path, NODE_UID, NODE_GID);
  if (lstatSync(path).isDirectory()) for (const e of readdirSync(path)) chownTree(join(path, e));
};
chownTree(PKI);

// The kubeconfigs belong to whoever owns the directory on the host (the clone's owner for the
// default deploy/kubeconfig), so that the user who ran docker-compose can read them.
const owner = statSync(OUT);
const b64 = (file) => readFileSync(join(PKI, file)).toString('base64');
for (const r of replicas) {
  const server = `https://${r.host.includes(':') ? `[${r.host}]` : r.host}:${r.port}`;
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${r.name}`,
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${b64('ca.crt')}`,
    'users:',
    '- name: admin',
    '  user:',
    `    client-certificate-data: ${b64('admin.crt')}`,
    `    client-key-data: ${b64('admin.key')}`,
    'contexts:',
    `- name: admin@${r.name}`,
    '  context:',
    `    cluster: ${r.name}`,
    '    user: admin',
    `current-context: admin@${r.name}`,
    '',
  ].join('\n');
  const path = join(OUT, `${r.name}.kubeconfig`);
  writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
  chmodSync(`${path}.tmp`, 0o600);
  chownSync(`${path}.tmp`, owner.uid, owner.gid);
  renameSync(`${path}.tmp`, path);
  process.stdout.write(`${r.name}: kubectl --kubeconfig ${path.replace(OUT, '<kubeconfig dir>')} get namespaces   (${server})\n`);
}
