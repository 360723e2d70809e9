// internal/cluster-cli/pki-command owns `clusterd pki`: reading the replicas from the command
// line (bad input is a UsageError: exit 2), generating or completing the cluster PKI directory,
// and telling the operator what was written and how to start each replica.
// Imports: args, pki/cluster-pki, cluster/ids (replica name rule; lazily, as it loads the
// certificate library, which built generation loads in its own process anyway).

import { classifyHosts, clusterPkiPaths, generateClusterPki, type ClusterPkiResult, type ReplicaSpec } from '../pki/cluster-pki.js';
import { multiKubeconfigText } from '../pki/pki.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { flag, parseArgs, UsageError, type CommandIo } from './args.js';

const COMMAND = 'clusterd pki';

export function pkiHelp(): string {
  return `Usage: ${COMMAND} --out DIR --replica NAME[=HOST,...] [--replica ...]

Creates the PKI directory of a multi-replica cluster. Make it once, on one machine, and copy it
to every replica. Running it again keeps every file that exists and adds the replicas that are
missing (before the cluster first starts: a replica added to a running cluster joins it with
--join and a join token instead, and receives its certificates then).

  DIR/ca.crt ca.key                 cluster CA: signs serving and client certificates
  DIR/peer-ca.crt peer-ca.key       peer CA: signs only the replicas' peer (Raft) certificates,
                                    so no client certificate can act as a peer
  DIR/admin.crt admin.key           admin client certificate (CN admin, O system:masters)
  DIR/sa.key sa.pub                 service-account token signing key pair
  DIR/join-token                    K10<SHA-256 of ca.crt>::<secret>, for joining replicas; valid
                                    24h from the cluster's first leader (then: clusterd token create)
  DIR/replicas/NAME/apiserver.crt apiserver.key   the replica's serving certificate
  DIR/replicas/NAME/peer.crt peer.key             the replica's peer certificate
  DIR/admin.kubeconfig              the admin credentials with a context per replica (named after
                                    it) at the address its printed command line serves; mode 0600

Flags:
  --out=DIR
      Directory to create or complete. Directories are made mode 0700; private keys and the
      join token are written mode 0600.
  --replica=NAME[=HOST,HOST...]
      A replica and the IP addresses and DNS names it is reached at; repeat for each replica.
      NAME is a DNS label (lower-case letters, digits and '-'). Its serving and peer
      certificates name localhost, 127.0.0.1, ::1, NAME and every HOST; the serving certificate
      also names kubernetes, kubernetes.default, kubernetes.default.svc,
      kubernetes.default.svc.cluster.local and the kubernetes Service's address 10.96.0.1.
      Without HOSTs a replica is reachable over loopback only (a cluster on one machine).
  --replicas=NAME=HOST[,HOST...][,NAME=HOST...]
      Several replicas in one flag: each NAME=HOST item starts a replica, and items without '='
      are further hosts of the replica before them. May be combined with --replica.
  -h, --help
      Print this help and exit.

Exit status: 0 done, 1 the directory could not be completed (the message says why), 2 bad
command line.

Example:
  ${COMMAND} --out ./cluster-pki --replica a=10.0.0.1,a.example.com --replica b=10.0.0.2 --replica c=10.0.0.3
`;
}

/** The replicas named by --replica and --replicas, checked (UsageError on bad input). */
export async function parseReplicaFlags(replica: readonly string[], replicas: readonly string[]): Promise<ReplicaSpec[]> {
  const { REPLICA_NAME } = await import('../cluster/ids.js');
  const specs: ReplicaSpec[] = [];
  for (const value of replica) {
    const eq = value.indexOf('=');
    const name = eq < 0 ? value : value.slice(0, eq);
    const hosts = eq < 0 ? [] : value.slice(eq + 1).split(',');
    if (eq >= 0 && hosts.some((h) => h === '')) throw new UsageError(`--replica ${value}: empty host (use NAME=HOST,HOST, or NAME alone for loopback only)`);
    specs.push({ name, hosts });
  }
  for (const value of replicas) {
    let current: ReplicaSpec | undefined;
    for (const item of value.split(',')) {
      if (item === '' || item.endsWith('=')) throw new UsageError(`--replicas ${value}: empty host`);
      const eq = item.indexOf('=');
      if (eq >= 0) {
        current = { name: item.slice(0, eq), hosts: [item.slice(eq + 1)] };
        specs.push(current);
      } else if (!current) {
        throw new UsageError(`--replicas ${value}: expected NAME=HOST first, got "${item}"`);
      } else {
        current.hosts.push(item);
      }
    }
  }
  const seen = new Set<string>();
  for (const s of specs) {
    if (!REPLICA_NAME.test(s.name)) {
      throw new UsageError(`invalid replica name "${s.name}": lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters`);
    }
    if (seen.has(s.name)) throw new UsageError(`replica "${s.name}" is given twice`);
    seen.add(s.name);
    try {
      classifyHosts(s.hosts);
    } catch (e) {
      throw new UsageError(`replica ${s.name}: ${(e as Error).message}`);
    }
  }
  return specs;
}

/**
 * How the operator starts replica `name` from the copied directory. The flags are the server's
 * (internal/config/flags.ts): keep these names in step with them.
 */
/**
 * Where each replica is reached: its first host (loopback without one), the default peer and
 * API ports 2380 and 6443, and on a host several replicas share (those without hosts: a
 * cluster on one machine) the next ports in their order, so that the printed command lines
 * run as they are beside each other.
 */
export function replicaAddresses(replicas: readonly ReplicaSpec[]): Array<{ name: string; host: string; peerPort: number; apiPort: number }> {
  const onHost = new Map<string, number>();
  return replicas.map((r) => {
    const host = r.hosts[0] ?? '127.0.0.1';
    const k = onHost.get(host) ?? 0;
    onHost.set(host, k + 1);
    return { name: r.name, host, peerPort: 2380 + k, apiPort: 6443 + k };
  });
}

const bracketed = (host: string) => (host.includes(':') ? `[${host}]` : host);

/** The command line that starts one founding replica: every replica gets the same --initial-cluster. */
export function startCommand(dir: string, name: string, replicas: readonly ReplicaSpec[]): string {
  const addresses = replicaAddresses(replicas);
  const initial = addresses.map((r) => `${r.name}=${bracketed(r.host)}:${r.peerPort}`).join(',');
  const apiPort = addresses.find((r) => r.name === name)?.apiPort ?? 6443;
  return `clusterd --name=${name} --pki-dir=${dir} --initial-cluster=${initial}${apiPort !== 6443 ? ` --secure-port=${apiPort}` : ''} --data-dir=<its data directory>`;
}

/**
 * The admin kubeconfig of the PKI directory: a cluster and a context per replica (named after
 * it) at the API address its printed command line serves, the first replica's current; the
 * admin client certificate and key inline.
 */
export function adminKubeconfigText(replicas: readonly ReplicaSpec[], pem: { ca: string; cert: string; key: string }): string {
  const servers = replicaAddresses(replicas).map((r) => ({ cluster: r.name, server: `https://${bracketed(r.host)}:${r.apiPort}`, context: r.name }));
  return multiKubeconfigText({ servers, caPem: pem.ca, certPem: pem.cert, keyPem: pem.key });
}

export function pkiReport(result: ClusterPkiResult, requested: readonly ReplicaSpec[]): string {
  const { dir } = result;
  const rel = (p: string) => p.slice(dir.length + 1);
  const lines: string[] = [];
  const shared = clusterPkiPaths(dir, '_');
  const expected = [
    shared.caCert, shared.caKey, shared.peerCaCert, shared.peerCaKey, shared.adminCert, shared.adminKey, shared.saKey, shared.saPub, shared.joinToken,
    ...result.replicas.flatMap((p) => [p.serverCert, p.serverKey, p.peerCert, p.peerKey]),
    join(dir, 'admin.kubeconfig'),
  ];
  const kept = expected.length - result.written.length;
  if (result.written.length === 0) {
    lines.push(`Cluster PKI in ${dir}: nothing to write, every file exists.`);
  } else {
    lines.push(`Cluster PKI in ${dir}:`);
    // In layout order (the generator writes each key before its certificate).
    const order = (p: string) => (expected.includes(p) ? expected.indexOf(p) : expected.length);
    for (const p of [...result.written].sort((a, b) => order(a) - order(b))) lines.push(`  wrote ${rel(p)}`);
    if (kept > 0) lines.push(`  kept ${kept} existing file${kept === 1 ? '' : 's'}`);
  }
  lines.push(
    '',
    'Next:',
    `  1. Copy ${dir} to every replica, at the same path. It holds both CA keys and the join`,
    '     token: keep it private.',
    '  2. Start each replica:',
  );
  const width = Math.max(...requested.map((r) => r.name.length));
  for (const r of requested) {
    lines.push(`       ${r.name.padEnd(width)}  ${startCommand(dir, r.name, requested)}${r.hosts.length ? `   # at ${r.hosts.join(', ')}` : ''}`);
  }
  lines.push(
    `  3. Check the cluster with ${join(dir, 'admin.kubeconfig')} (a context per replica, the first current;`,
    '     each replica also writes <data-dir>/admin.kubeconfig for itself):',
    `       clusterd members --kubeconfig ${join(dir, 'admin.kubeconfig')}`,
    '  To add a replica to the running cluster, make a join token on a member, then start the new one',
    '  with the API address of any member (it receives its certificates; it needs no PKI of its own):',
    '       TOKEN=$(clusterd token create --ttl=1h --kubeconfig <data-dir>/admin.kubeconfig)',
    '       clusterd --name=NAME --data-dir=<its data directory> --join=https://MEMBER:6443 --token="$TOKEN" --peer-address=HOST:2380',
  );
  return lines.join('\n') + '\n';
}

export async function runPkiCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  const args = parseArgs(argv, { out: {}, replica: { repeated: true }, replicas: { repeated: true } }, COMMAND);
  if (args.help) {
    io.out(pkiHelp());
    return 0;
  }
  if (args.positionals.length) throw new UsageError(`unexpected argument "${args.positionals[0]}" (see ${COMMAND} --help)`);
  const out = flag(args, 'out');
  if (!out) throw new UsageError(`--out is required (see ${COMMAND} --help)`);
  const replicas = await parseReplicaFlags(args.flags.get('replica') ?? [], args.flags.get('replicas') ?? []);
  if (!replicas.length) throw new UsageError(`name at least one replica with --replica NAME=HOST (see ${COMMAND} --help)`);
  const result = await generateClusterPki(out, replicas);
  // Kept when it exists, as every file here: the operator may have edited it.
  const kubeconfig = join(result.dir, 'admin.kubeconfig');
  if (!existsSync(kubeconfig)) {
    const paths = clusterPkiPaths(result.dir, replicas[0]!.name);
    const text = adminKubeconfigText(replicas, { ca: readFileSync(paths.caCert, 'utf8'), cert: readFileSync(paths.adminCert, 'utf8'), key: readFileSync(paths.adminKey, 'utf8') });
    writeFileSync(kubeconfig, text, { mode: 0o600, flag: 'wx' });
    result.written.push(kubeconfig);
  }
  io.out(pkiReport(result, replicas));
  for (const w of result.warnings) io.err(`warning: ${w}\n`);
  return 0;
}
