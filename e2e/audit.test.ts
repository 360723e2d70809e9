// The audit log of a real server process, read back from disk: kubectl's requests produce
// audit.k8s.io/v1 events at the levels and stages the policy gives them (bodies only at Request
// and RequestResponse, managedFields left out, a watch's three stages), a deprecated custom
// resource version is annotated, the file rotates at --audit-log-maxsize with old backups
// pruned, and a stalled log reader makes the server drop and count events, never hang.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { PROJECT_ROOT, startServerProcess, type ServerProcess } from './support/server-process.js';

interface AuditEvent {
  kind: string;
  apiVersion: string;
  level: string;
  auditID: string;
  stage: string;
  requestURI: string;
  verb: string;
  user: { username?: string; groups?: string[] };
  impersonatedUser?: { username?: string };
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: { resource?: string; namespace?: string; name?: string; apiGroup?: string; apiVersion?: string; uid?: string; resourceVersion?: string };
  responseStatus?: { code: number; status?: string; reason?: string; message?: string };
  requestObject?: Record<string, unknown>;
  responseObject?: Record<string, unknown>;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

const readEvents = (path: string): AuditEvent[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent);

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitManagedFields: true
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/openapi*", "/api*", "/version"]
- level: RequestResponse
  resources: [{group: "", resources: [configmaps]}]
- level: Request
  resources: [{group: "", resources: [secrets]}]
- level: Metadata
  omitStages: [RequestReceived]
`;

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  - name: v1beta1
    served: true
    storage: false
    deprecated: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`;

const requireKubectl = process.env.CI === 'true' || kubectlAvailable();

describe.skipIf(!requireKubectl)('audit log of kubectl requests (--naming=kubernetes)', () => {
  let server: ServerProcess;
  let dir: string;
  let events: AuditEvent[];
  const k = (args: string[], input?: string) => kubectl(server.kubeconfig, args, input);
  const find = (pred: (e: AuditEvent) => boolean): AuditEvent[] => events.filter(pred);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clusterd-audit-'));
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    server = await startServerProcess(['--naming=kubernetes', `--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-log-path=${join(dir, 'logs', 'audit.log')}`]);
    const run = async (args: string[], input?: string) => {
      const r = await k(args, input);
      if (r.code !== 0 && !args.includes('--as=bob')) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
      return r;
    };
    await run(['create', 'configmap', 'c1', '--from-literal=a=b']);
    await run(['get', 'configmap', 'c1', '-o', 'name']);
    // A real watch: kubectl waits (get, then watch) until the delete below ends it.
    const waiter = k(['wait', '--for=delete', 'configmap/c1', '--timeout=60s']);
    await new Promise((r) => setTimeout(r, 1000));
    await run(['delete', 'configmap', 'c1']);
    expect((await waiter).code).toBe(0);
    await run(['create', 'secret', 'generic', 's1', '--from-literal=k=v']);
    await run(['get', 'namespace', 'default']);
    await run(['get', 'configmap', 'missing', '--ignore-not-found']);
    await run(['get', 'configmaps', '--as=bob']);
    await run(['apply', '-f', '-'], CRD);
    await run(['wait', '--for=condition=Established', 'crd/widgets.example.com', '--timeout=20s']);
    const deprecated = await run(['get', 'widgets.v1beta1.example.com']);
    expect(deprecated.stderr).toContain('Warning: example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget');
    const ok = await server.admin.request('GET', '/api/v1/namespaces/default', { headers: { 'audit-id': 'client-chosen-id' } });
    expect(ok.headers['audit-id']).toBe('client-chosen-id');
    // Shutdown flushes the queue: every event is on disk once the process exits.
    expect(await server.stop()).toBe(0);
    events = readEvents(join(dir, 'logs', 'audit.log'));
  });
  afterAll(async () => {
    if (server.child.exitCode === null) await server.stop();
  });

  it('writes audit.k8s.io/v1 events for the authenticated user, with IDs, times and the source', () => {
    expect(events.length).toBeGreaterThan(10);
    for (const e of events) {
      expect(e.kind).toBe('Event');
      expect(e.apiVersion).toBe('audit.k8s.io/v1');
      expect(e.auditID).toMatch(/^[0-9a-f-]{36}$|^client-chosen-id$/);
      expect(e.requestReceivedTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      expect(e.stageTimestamp >= e.requestReceivedTimestamp).toBe(true);
      expect(e.sourceIPs).toEqual(['127.0.0.1']);
    }
    expect(find((e) => e.auditID === 'client-chosen-id')).toHaveLength(1);
    // The policy leaves health and discovery out entirely.
    expect(find((e) => e.requestURI.startsWith('/readyz') || e.requestURI.startsWith('/api?') || e.requestURI.startsWith('/openapi'))).toEqual([]);
  });

  it('create at RequestResponse: both stages, both bodies, objectRef from the request, managedFields omitted', () => {
    const create = find((e) => e.verb === 'create' && e.objectRef?.resource === 'configmaps');
    expect(create.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
    const done = create[1]!;
    expect(done.level).toBe('RequestResponse');
    expect(done.user.username).toBe('admin');
    expect(done.user.groups).toContain('system:masters');
    expect(done.userAgent).toMatch(/^kubectl\//);
    expect(done.objectRef).toMatchObject({ resource: 'configmaps', namespace: 'default', name: 'c1', apiVersion: 'v1' });
    expect(done.responseStatus?.code).toBeGreaterThanOrEqual(200);
    expect(done.responseStatus?.code).toBeLessThan(300);
    expect(done.requestObject).toMatchObject({ kind: 'ConfigMap', data: { a: 'b' } });
    expect(done.responseObject).toMatchObject({ kind: 'ConfigMap', data: { a: 'b' }, metadata: { name: 'c1', namespace: 'default' } });
    expect((done.responseObject!.metadata as Record<string, unknown>).uid).toEqual(expect.any(String));
    expect(done.responseObject!.metadata).not.toHaveProperty('managedFields');
    expect(done.annotations).toMatchObject({ 'authorization.k8s.io/decision': 'allow' });
    // RequestReceived is logged before anything ran: no status, no bodies yet.
    expect(create[0]!.responseStatus).toBeUndefined();
    expect(create[0]!.requestObject).toBeUndefined();
  });

  it('get and delete at RequestResponse; a failed get carries the Status', () => {
    const get = find((e) => e.verb === 'get' && e.objectRef?.name === 'c1' && e.stage === 'ResponseComplete');
    expect(get.length).toBeGreaterThanOrEqual(1);
    expect(get[0]!.responseObject).toMatchObject({ metadata: { name: 'c1' } });
    expect(get[0]!.requestObject).toBeUndefined();
    const del = find((e) => e.verb === 'delete' && e.objectRef?.name === 'c1');
    expect(del.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
    expect(del[1]!.responseStatus?.code).toBe(200);
    const missing = find((e) => e.verb === 'get' && e.objectRef?.name === 'missing' && e.stage === 'ResponseComplete');
    expect(missing[0]!.responseStatus).toMatchObject({ code: 404, status: 'Failure', reason: 'NotFound' });
  });

  it('a watch has RequestReceived, ResponseStarted when its headers go out, ResponseComplete when it ends', () => {
    const watches = find((e) => e.verb === 'watch' && e.objectRef?.resource === 'configmaps');
    const byId = new Map<string, string[]>();
    for (const e of watches) byId.set(e.auditID, [...(byId.get(e.auditID) ?? []), e.stage]);
    expect([...byId.values()]).toContainEqual(['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
    for (const e of watches) expect(e.responseObject).toBeUndefined();
  });

  it('Request level logs the request body only; Metadata logs neither and omits RequestReceived', () => {
    const secret = find((e) => e.verb === 'create' && e.objectRef?.resource === 'secrets');
    expect(secret.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
    expect(secret[1]!.level).toBe('Request');
    expect(secret[1]!.requestObject).toMatchObject({ kind: 'Secret' });
    expect(secret[1]!).not.toHaveProperty('responseObject');
    const ns = find((e) => e.objectRef?.resource === 'namespaces' && e.objectRef.name === 'default' && e.verb === 'get');
    expect(ns.length).toBeGreaterThanOrEqual(1);
    for (const e of ns) {
      expect(e.level).toBe('Metadata');
      expect(e.stage).toBe('ResponseComplete');
      expect(e).not.toHaveProperty('requestObject');
      expect(e).not.toHaveProperty('responseObject');
    }
  });

  it('an impersonated request names both users and the authorizer\'s refusal', () => {
    const imp = find((e) => e.impersonatedUser?.username === 'bob');
    expect(imp.length).toBeGreaterThanOrEqual(1);
    expect(imp[0]!.user.username).toBe('admin');
    expect(imp[0]!.responseStatus).toMatchObject({ code: 403, status: 'Failure', reason: 'Forbidden' });
    expect(imp[0]!.annotations?.['authorization.k8s.io/decision']).toBe('forbid');
  });

  it('a request to a deprecated version is annotated k8s.io/deprecated', () => {
    const dep = find((e) => e.objectRef?.resource === 'widgets' && e.objectRef.apiVersion === 'v1beta1' && e.stage === 'ResponseComplete');
    expect(dep.length).toBeGreaterThanOrEqual(1);
    expect(dep[0]!.annotations?.['k8s.io/deprecated']).toBe('true');
    const current = find((e) => e.objectRef?.resource === 'widgets' && e.objectRef.apiVersion === 'v1');
    for (const e of current) expect(e.annotations?.['k8s.io/deprecated']).toBeUndefined();
  });
});

describe('audit log rotation and a stalled reader', () => {
  it('rotates at --audit-log-maxsize, keeps --audit-log-maxbackup backups, files 0600', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clusterd-audit-rot-'));
    writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  resources: [{group: "", resources: [configmaps]}]\n');
    const server = await startServerProcess([`--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-log-path=${join(dir, 'audit.log')}`, '--audit-log-maxsize=1', '--audit-log-maxbackup=2']);
    try {
      // Each create logs the 200 KB value twice (request and response): two creates a file,
      // five files, four rotations, of which the two newest backups are kept.
      const value = 'v'.repeat(200 * 1024);
      for (let i = 0; i < 10; i++) {
        const r = await server.admin.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: `big-${i}` }, data: { value } } });
        expect(r.status).toBeLessThan(300);
      }
    } finally {
      expect(await server.stop()).toBe(0);
    }
    const files = readdirSync(dir).filter((f) => f !== 'policy.yaml').sort();
    const backups = files.filter((f) => /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log$/.test(f));
    expect(backups).toHaveLength(2);
    expect(files).toEqual([...backups, 'audit.log']);
    const all: AuditEvent[] = [];
    for (const f of files) {
      const st = statSync(join(dir, f));
      expect(st.mode & 0o777).toBe(0o600);
      expect(st.size).toBeLessThanOrEqual(1024 * 1024);
      all.push(...readEvents(join(dir, f)));
    }
    // The newest events are kept, whole; the oldest backups (the first creates) were deleted.
    const names = all.filter((e) => e.stage === 'ResponseComplete').map((e) => e.objectRef?.name);
    expect(names).toEqual(['big-4', 'big-5', 'big-6', 'big-7', 'big-8', 'big-9']);
  });

  it('batch mode with a full queue on a FIFO nobody reads: requests are answered, drops are counted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clusterd-audit-fifo-'));
    writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n');
    const fifo = join(dir, 'audit.pipe');
    execFileSync('mkfifo', [fifo]);
    // The reader end is held open (so the server's open does not wait) and never read.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const server = await startServerProcess([`--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-log-path=${fifo}`, '--audit-log-mode=batch', '--audit-log-batch-buffer-size=1']);
    try {
      const body = { metadata: { name: '' }, data: { value: 'v'.repeat(4096) } };
      for (let i = 0; i < 40; i++) {
        body.metadata.name = `c-${i}`;
        const r = await server.admin.request('POST', '/api/v1/namespaces/default/configmaps', { body });
        expect(r.status).toBeLessThan(300);
      }
      const metrics = (await server.admin.request('GET', '/metrics')).text();
      const dropped = Number(/^apiserver_audit_error_total\{plugin="buffered"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
      const total = Number(/^apiserver_audit_event_total (\d+)$/m.exec(metrics)?.[1] ?? 0);
      expect(dropped).toBeGreaterThan(0);
      expect(total).toBeGreaterThan(dropped);
      expect(server.logs()).toContain('audit events dropped');
      // What did reach the pipe is whole events.
      const buf = Buffer.alloc(1 << 20);
      const n = readSync(reader, buf, 0, buf.length, null);
      const lines = buf.toString('utf8', 0, n).split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThan(0);
      expect(JSON.parse(lines[0]!)).toMatchObject({ kind: 'Event', apiVersion: 'audit.cluster.io/v1' });
    } finally {
      closeSync(reader);
      await server.stop();
    }
  });

  it('an invalid policy file stops the start with the field that is wrong', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clusterd-audit-bad-'));
    writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n- level: Verbose\n');
    const child = spawn(process.execPath, [join(PROJECT_ROOT, 'dist', 'cmd', 'clusterd', 'main.js'), `--data-dir=${join(dir, 'data')}`, '--secure-port=0', `--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-log-path=${join(dir, 'a.log')}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(1);
    expect(stderr).toContain(`audit policy file ${join(dir, 'policy.yaml')}: rules[1].level: Unsupported value: "Verbose"`);
  });
});
