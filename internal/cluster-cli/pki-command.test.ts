import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCaptured } from './run-captured.js';
import { parseReplicaFlags, pkiHelp } from './pki-command.js';
import { clusterPkiPaths } from '../pki/cluster-pki.js';
import { readKubeconfig } from './kubeconfig.js';

const pki = (...argv: string[]) => runCaptured(['pki', ...argv]);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'clusterd-pki-command-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('clusterd pki', () => {
  it('--help explains every flag and the layout', async () => {
    const { code, stdout, stderr } = await pki('--help');
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toBe(pkiHelp());
    for (const text of ['--out=DIR', '--replica=NAME[=HOST,HOST...]', '--replicas=NAME=HOST', '-h, --help', 'peer-ca.crt', 'join-token', 'replicas/NAME/peer.crt', 'admin.kubeconfig', 'Exit status']) {
      expect(stdout).toContain(text);
    }
  });

  it('writes the directory, lists what it wrote in layout order, and shows how to start each replica', async () => {
    const out = join(dir, 'pki');
    const { code, stdout, stderr } = await pki('--out', out, '--replica', 'a=10.0.0.1,a.example.com', '--replicas=b=10.0.0.2,b.example.com,c=10.0.0.3');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const wrote = stdout.split('\n').filter((l) => l.startsWith('  wrote ')).map((l) => l.slice(8));
    expect(wrote).toEqual([
      'ca.crt', 'ca.key', 'peer-ca.crt', 'peer-ca.key', 'admin.crt', 'admin.key', 'sa.key', 'sa.pub', 'join-token',
      ...['a', 'b', 'c'].flatMap((r) => [`replicas/${r}/apiserver.crt`, `replicas/${r}/apiserver.key`, `replicas/${r}/peer.crt`, `replicas/${r}/peer.key`]),
      'admin.kubeconfig',
    ]);
    expect(stdout).toMatch(/^Cluster PKI in .*:\n/);
    expect(stdout).toContain(`  1. Copy ${out} to every replica`);
    expect(stdout).toContain(`       a  clusterd --name=a --pki-dir=${out} --initial-cluster=a=10.0.0.1:2380,b=10.0.0.2:2380,c=10.0.0.3:2380 --data-dir=<its data directory>   # at 10.0.0.1, a.example.com\n`);
    expect(stdout).toContain(`       b  clusterd --name=b --pki-dir=${out} --initial-cluster=a=10.0.0.1:2380,b=10.0.0.2:2380,c=10.0.0.3:2380 --data-dir=<its data directory>   # at 10.0.0.2, b.example.com\n`);
    expect(stdout).toContain(`       c  clusterd --name=c --pki-dir=${out} --initial-cluster=a=10.0.0.1:2380,b=10.0.0.2:2380,c=10.0.0.3:2380 --data-dir=<its data directory>   # at 10.0.0.3\n`);
    const b = new X509Certificate(readFileSync(clusterPkiPaths(out, 'b').serverCert));
    expect(b.subjectAltName).toContain('DNS:b.example.com');
    expect(b.subjectAltName).toContain('IP Address:10.0.0.2');
    expect(b.subjectAltName).not.toContain('10.0.0.3');
  });

  // Replicas without hosts are a cluster on one machine: the printed command lines must be
  // runnable as they are there, so the replicas cannot share the peer port or the API port.
  it('prints command lines for a one-machine cluster with a peer and an API port of its own per replica', async () => {
    const out = join(dir, 'pki');
    const { code, stdout } = await pki('--out', out, '--replica', 'a', '--replica', 'b', '--replica', 'c', '--replica', 'd=10.0.0.4');
    expect(code).toBe(0);
    const initial = 'a=127.0.0.1:2380,b=127.0.0.1:2381,c=127.0.0.1:2382,d=10.0.0.4:2380';
    expect(stdout).toContain(`       a  clusterd --name=a --pki-dir=${out} --initial-cluster=${initial} --data-dir=<its data directory>\n`);
    expect(stdout).toContain(`       b  clusterd --name=b --pki-dir=${out} --initial-cluster=${initial} --secure-port=6444 --data-dir=<its data directory>\n`);
    expect(stdout).toContain(`       c  clusterd --name=c --pki-dir=${out} --initial-cluster=${initial} --secure-port=6445 --data-dir=<its data directory>\n`);
    expect(stdout).toContain(`       d  clusterd --name=d --pki-dir=${out} --initial-cluster=${initial} --data-dir=<its data directory>   # at 10.0.0.4\n`);
  });

  // A replica started with --initial-cluster naming itself, next to a running cluster that
  // never added it, waits for a leader forever: a replica is added by joining with a token.
  it('tells how to add a replica to the running cluster: a join token and --join, not a new static entry', async () => {
    const { stdout } = await pki('--out', join(dir, 'pki'), '--replica', 'a=10.0.0.1');
    const hint = stdout.slice(stdout.indexOf('To add a replica'));
    expect(hint).toContain('clusterd token create');
    expect(hint).toContain('--join=https://');
    expect(hint).toContain('--token=');
    expect(hint).toContain('--peer-address=');
    expect(hint).not.toContain('--replica NAME');
  });

  // Issue 13 §1: the PKI subcommand makes "the admin kubeconfig" too. One context per replica,
  // at the address its printed command line serves, so kubectl and clusterd members work at
  // once (--context picks a replica); the admin key is in it, so it is private.
  it('writes admin.kubeconfig with a context per replica at its API address, mode 0600, kept on a second run', async () => {
    const out = join(dir, 'pki');
    const { stdout } = await pki('--out', out, '--replica', 'a', '--replica', 'b', '--replica', 'c=10.0.0.3,c.example.com', '--replica', 'd=fd00::4');
    expect(stdout).toContain('  wrote admin.kubeconfig\n');
    const path = join(out, 'admin.kubeconfig');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const creds = ['a', 'b', 'c', 'd'].map((context) => readKubeconfig(path, context === 'a' ? {} : { context }));
    expect(creds.map((c) => c.server)).toEqual(['https://127.0.0.1:6443', 'https://127.0.0.1:6444', 'https://10.0.0.3:6443', 'https://[fd00::4]:6443']);
    const pem = (f: string) => readFileSync(join(out, f), 'utf8');
    for (const c of creds) expect([c.caPem, c.certPem, c.keyPem]).toEqual([pem('ca.crt'), pem('admin.crt'), pem('admin.key')]);
    const before = readFileSync(path, 'utf8');
    const again = await pki('--out', out, '--replica', 'e');
    expect(again.stdout).not.toContain('wrote admin.kubeconfig');
    expect(readFileSync(path, 'utf8')).toBe(before);
  });

  it('on a second run keeps everything, adds a new replica, and warns about hosts a kept certificate lacks', async () => {
    const out = join(dir, 'pki');
    await pki('--out', out, '--replica', 'a=10.0.0.1');
    const same = await pki('--out', out, '--replica', 'a=10.0.0.1');
    expect(same.code).toBe(0);
    expect(same.stdout).toMatch(/^Cluster PKI in .*: nothing to write, every file exists\.\n/);
    const more = await pki('--out', out, '--replica', 'a=10.0.0.1,10.0.0.9', '--replica', 'd');
    expect(more.code).toBe(0);
    expect(more.stdout).toContain('  wrote replicas/d/peer.key\n  kept 14 existing files\n');
    expect(more.stderr).toBe(
      "warning: replicas/a/apiserver.crt was kept and does not name 10.0.0.9 (delete replicas/a to have the replica's certificates issued again)\n" +
        "warning: replicas/a/peer.crt was kept and does not name 10.0.0.9 (delete replicas/a to have the replica's certificates issued again)\n",
    );
  });

  it('exits 1 with the reason when the directory cannot be completed', async () => {
    const out = join(dir, 'pki');
    await pki('--out', out, '--replica', 'a');
    unlinkSync(join(out, 'ca.key'));
    const { code, stdout, stderr } = await pki('--out', out, '--replica', 'a');
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^clusterd pki: ca\.crt exists without ca\.key: nothing can be signed with it/);
  });

  it.each([
    [[], '--out is required (see clusterd pki --help)'],
    [['--out', 'X'], 'name at least one replica with --replica NAME=HOST (see clusterd pki --help)'],
    [['--out', 'X', '--replica', 'A=10.0.0.1'], 'invalid replica name "A": lower-case letters, digits and \'-\', starting and ending with a letter or digit, at most 63 characters'],
    [['--out', 'X', '--replica', 'a=10.0.0.1:6443'], 'replica a: host "10.0.0.1:6443" is neither an IP address nor a DNS name (give the bare host, without scheme or port)'],
    [['--out', 'X', '--replica', 'a=', '--replica', 'b'], '--replica a=: empty host (use NAME=HOST,HOST, or NAME alone for loopback only)'],
    [['--out', 'X', '--replica', 'a=h1,,h2'], '--replica a=h1,,h2: empty host (use NAME=HOST,HOST, or NAME alone for loopback only)'],
    [['--out', 'X', '--replica', 'a', '--replicas', 'a=h'], 'replica "a" is given twice'],
    [['--out', 'X', '--replicas', 'h1,a=h2'], '--replicas h1,a=h2: expected NAME=HOST first, got "h1"'],
    [['--out', 'X', '--replicas', 'a=h1,b='], '--replicas a=h1,b=: empty host'],
    [['--out', 'X', '--replica', 'a', 'extra'], 'unexpected argument "extra" (see clusterd pki --help)'],
    [['--out', 'X', '--out', 'Y', '--replica', 'a'], '--out given twice (see clusterd pki --help)'],
    [['--replicaa', 'a'], 'unknown flag: --replicaa (see clusterd pki --help)'],
  ])('exits 2 on %j, writing nothing', async (argv, message) => {
    const { code, stdout, stderr } = await pki(...argv.map((a) => (a === 'X' ? join(dir, 'x') : a)));
    expect(stderr).toBe(`clusterd pki: ${message.replace('X', join(dir, 'x'))}\n`);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(existsSync(join(dir, 'x'))).toBe(false);
  });
});

describe('parseReplicaFlags', () => {
  it('reads --replica and --replicas alike, in order', async () => {
    expect(await parseReplicaFlags(['a=10.0.0.1,a.example.com', 'b'], ['c=10.0.0.3,c.example.com,d=fd00::4'])).toEqual([
      { name: 'a', hosts: ['10.0.0.1', 'a.example.com'] },
      { name: 'b', hosts: [] },
      { name: 'c', hosts: ['10.0.0.3', 'c.example.com'] },
      { name: 'd', hosts: ['fd00::4'] },
    ]);
  });
});
