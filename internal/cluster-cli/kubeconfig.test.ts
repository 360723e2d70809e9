import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigText } from '../pki/pki.js';
import { generateClusterPki, clusterPkiPaths } from '../pki/cluster-pki.js';
import { KubeconfigError, readKubeconfig } from './kubeconfig.js';

let dir: string;
let ca: string;
let cert: string;
let key: string;
let pkiDir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'clusterd-kubeconfig-'));
  pkiDir = join(dir, 'pki');
  await generateClusterPki(pkiDir, []);
  const p = clusterPkiPaths(pkiDir, 'a');
  ca = readFileSync(p.caCert, 'utf8');
  cert = readFileSync(p.adminCert, 'utf8');
  key = readFileSync(p.adminKey, 'utf8');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, text: string): string => {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
};
const b64 = (s: string) => Buffer.from(s).toString('base64');

const hasKubectl = (() => {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('readKubeconfig', () => {
  it('reads the admin kubeconfig the server writes (inline data)', () => {
    const path = write('admin.kubeconfig', kubeconfigText({ server: 'https://127.0.0.1:6443', caPem: ca, certPem: cert, keyPem: key }));
    expect(readKubeconfig(path)).toEqual({
      path,
      context: 'admin@clusterd',
      server: 'https://127.0.0.1:6443',
      caPem: ca,
      insecureSkipTlsVerify: false,
      tlsServerName: undefined,
      certPem: cert,
      keyPem: key,
      token: undefined,
    });
  });

  it.skipIf(!hasKubectl)('reads a kubeconfig kubectl wrote, with file paths relative to the kubeconfig', () => {
    const path = join(dir, 'kubectl-config');
    const env = { ...process.env, KUBECONFIG: path };
    const p = clusterPkiPaths(pkiDir, 'a');
    const kubectl = (...args: string[]) => execFileSync('kubectl', args, { env, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    kubectl('config', 'set-cluster', 'c1', '--server=https://10.0.0.1:6443', `--certificate-authority=${p.caCert}`, '--embed-certs=true');
    kubectl('config', 'set-credentials', 'u1', `--client-certificate=${p.adminCert}`, `--client-key=${p.adminKey}`);
    kubectl('config', 'set-context', 'ctx', '--cluster=c1', '--user=u1');
    kubectl('config', 'use-context', 'ctx');
    // kubectl stores paths below the kubeconfig's directory relative to it; they must resolve from any cwd.
    expect(readFileSync(path, 'utf8')).toContain('client-certificate: pki/admin.crt');
    const creds = readKubeconfig(path);
    expect(creds).toMatchObject({ context: 'ctx', server: 'https://10.0.0.1:6443', caPem: ca, certPem: cert, keyPem: key });
  });

  const multi = () =>
    write(
      'multi/config',
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: one',
        'clusters:',
        '- name: c1',
        '  cluster:',
        '    server: https://one.example:6443',
        '    certificate-authority: ../pki/ca.crt',
        `    certificate-authority-data: ${b64(ca)}`,
        '- name: c2',
        '  cluster:',
        '    server: https://10.0.0.2:6443/prefix',
        '    insecure-skip-tls-verify: true',
        '    tls-server-name: kubernetes.default.svc',
        'users:',
        '- name: admin',
        '  user:',
        '    client-certificate: ../pki/admin.crt',
        '    client-key: ../pki/admin.key',
        '- name: bot',
        '  user:',
        '    token: abc.def',
        'contexts:',
        '- name: one',
        '  context: {cluster: c1, user: admin}',
        '- name: two',
        '  context: {cluster: c2, user: bot}',
        '',
      ].join('\n'),
    );

  it('follows current-context, or the context named, and prefers inline data to a path', () => {
    const path = multi();
    const one = readKubeconfig(path);
    expect(one).toMatchObject({ context: 'one', server: 'https://one.example:6443', caPem: ca, certPem: cert, keyPem: key, token: undefined });
    const two = readKubeconfig(path, { context: 'two' });
    expect(two).toMatchObject({
      context: 'two', server: 'https://10.0.0.2:6443/prefix', caPem: undefined, insecureSkipTlsVerify: true,
      tlsServerName: 'kubernetes.default.svc', certPem: undefined, keyPem: undefined, token: 'abc.def',
    });
  });

  it.each([
    ['missing.yaml', null, /cannot read kubeconfig .*missing\.yaml: no such file/],
    ['bad.yaml', 'clusters: [\n', /bad\.yaml: not valid YAML/],
    ['scalar.yaml', 'just text\n', /not a kubeconfig/],
    ['nocontext.yaml', 'clusters: []\n', /no current-context is set \(name a context with --context\)/],
    ['unknown.yaml', 'current-context: x\ncontexts: []\n', /context "x" not found in contexts/],
    ['nocluster.yaml', 'current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n', /cluster "c" not found in clusters/],
    [
      'http.yaml',
      'current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: {server: "http://h:8080"}\n',
      /server http:\/\/h:8080 is not https/,
    ],
    [
      'halfcert.yaml',
      'current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster: {server: "https://h"}\nusers:\n- name: u\n  user: {client-certificate: ../pki/admin.crt}\n',
      /user "u" has a client certificate without a key/,
    ],
    [
      'badb64.yaml',
      'current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: {server: "https://h", certificate-authority-data: "%%%"}\n',
      /clusters\[c\]\.certificate-authority-data is not base64-encoded PEM/,
    ],
    [
      'nofile.yaml',
      'current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: {server: "https://h", certificate-authority: nowhere/ca.crt}\n',
      /cannot read clusters\[c\]\.certificate-authority .*nowhere\/ca\.crt: no such file/,
    ],
    [
      'badtype.yaml',
      'current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: {server: 6443}\n',
      /clusters\[c\]\.server must be a string/,
    ],
  ])('%s: refused with a message naming the problem', (name, text, message) => {
    const path = text === null ? join(dir, 'cases', name) : write(join('cases', name), text);
    expect(() => readKubeconfig(path)).toThrow(KubeconfigError);
    expect(() => readKubeconfig(path)).toThrow(message);
  });

  it('names an unknown --context', () => {
    expect(() => readKubeconfig(multi(), { context: 'three' })).toThrow(/context "three" not found in contexts/);
  });
});
