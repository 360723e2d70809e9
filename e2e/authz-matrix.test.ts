// The authorization matrix: every default ClusterRole of the bootstrap policy, bound to a test
// user (ClusterRoleBinding, and RoleBinding in one namespace), against every verb on a
// representative resource of every served group (with sub-resources and resource names) and
// the non-resource URLs, through SubjectAccessReview on a real server process; the expected
// decisions come from e2e/fixtures/authz-matrix.json, which tools/gen-authz-matrix.mjs computes
// from upstream's bootstrap-policy testdata with an evaluator of its own. A sample of the cells
// goes through the real `kubectl auth can-i --as` (under --naming=kubernetes: kubectl asks
// authorization.k8s.io whatever the server serves); and the escalation
// paths a user with `edit` might try are refused.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNaming, type NamingMode } from '../internal/naming/naming.js';
import { issueCertificate, loadCertificateAuthority } from '../internal/pki/certificates.js';
import { pkiPaths } from '../internal/pki/pki.js';
import { ApiClient } from '../internal/testserver/api-client.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { PROJECT_ROOT, startServerProcess, type ServerProcess } from './support/server-process.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- loosely typed API objects
type ResourceColumn = [verb: string, group: string, resource: string, name: string, namespace: string];
type PathColumn = [verb: string, path: string];
interface Matrix {
  namespace: string;
  groups: string[];
  cells: number;
  allowed: number;
  resourceColumns: ResourceColumn[];
  pathColumns: PathColumn[];
  rows: Array<[role: string, binding: 'crb' | 'rb' | 'none', resources: string, paths: string]>;
}

const matrix = JSON.parse(readFileSync(join(PROJECT_ROOT, 'e2e', 'fixtures', 'authz-matrix.json'), 'utf8')) as Matrix;
const hasKubectl = kubectlAvailable();
if (!hasKubectl && process.env.CI === 'true') throw new Error('kubectl is required under CI=true');

const userOf = (row: number, binding: string) => `authz-matrix-${binding}-${row}`;

interface Cell {
  row: number;
  role: string;
  binding: string;
  expected: boolean;
  resource?: ResourceColumn;
  path?: PathColumn;
}

function allCells(): Cell[] {
  const cells: Cell[] = [];
  matrix.rows.forEach(([role, binding, resources, paths], row) => {
    [...resources].forEach((bit, i) => bit !== '-' && cells.push({ row, role, binding, expected: bit === '1', resource: matrix.resourceColumns[i]! }));
    [...paths].forEach((bit, i) => bit !== '-' && cells.push({ row, role, binding, expected: bit === '1', path: matrix.pathColumns[i]! }));
  });
  return cells;
}

const describeCell = (c: Cell): string =>
  c.resource
    ? `${c.role || '(no role)'} via ${c.binding}: ${c.resource[0]} ${c.resource[1] || 'core'}/${c.resource[2]}${c.resource[3] ? ` name=${c.resource[3]}` : ''} ${c.resource[4] ? `in ${c.resource[4]}` : 'at cluster scope'}`
    : `${c.role || '(no role)'} via ${c.binding}: ${c.path![0]} ${c.path![1]}`;

async function pool<T>(items: readonly T[], concurrency: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) await run(items[next++]!);
  }));
}

async function startPolicyServer(mode: NamingMode): Promise<ServerProcess> {
  const s = await startServerProcess([`--naming=${mode}`]);
  const rbac = createNaming(mode).group('rbac.authorization.k8s.io');
  // The bootstrap roles are reconciled, and the aggregated roles filled by the controller.
  await waitFor(async () => (await s.admin.get('/readyz/poststarthook/rbac/bootstrap-roles')).status === 200, 'rbac/bootstrap-roles');
  await waitFor(async () => {
    const view = (await s.admin.get(`/apis/${rbac}/v1/clusterroles/view`)).json<Obj>();
    const admin = (await s.admin.get(`/apis/${rbac}/v1/clusterroles/admin`)).json<Obj>();
    return (view.rules ?? []).length > 0 && (admin.rules ?? []).length > 0;
  }, 'aggregated admin/view rules');
  return s;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** ClusterRoleBinding and RoleBinding per row, as the matrix says. */
async function bindRows(s: ServerProcess, mode: NamingMode): Promise<void> {
  const rbac = createNaming(mode).group('rbac.authorization.k8s.io');
  const ns = matrix.namespace;
  expect((await s.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status).toBeLessThan(300);
  await pool(matrix.rows.map((r, i) => [r, i] as const).filter(([[, b]]) => b !== 'none'), 8, async ([[role, binding], i]) => {
    const body = {
      apiVersion: `${rbac}/v1`,
      kind: binding === 'crb' ? 'ClusterRoleBinding' : 'RoleBinding',
      metadata: { name: userOf(i, binding), ...(binding === 'rb' ? { namespace: ns } : {}) },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'User', apiGroup: rbac, name: userOf(i, binding) }],
    };
    const path = binding === 'crb' ? `/apis/${rbac}/v1/clusterrolebindings` : `/apis/${rbac}/v1/namespaces/${ns}/rolebindings`;
    const r = await s.admin.post(path, body);
    expect(r.status, `${role} ${binding}: ${r.text()}`).toBeLessThan(300);
  });
}

async function review(s: ServerProcess, mode: NamingMode, c: Cell): Promise<boolean> {
  const naming = createNaming(mode);
  const authz = naming.group('authorization.k8s.io');
  const spec: Obj = { user: userOf(c.row, c.binding), groups: matrix.groups };
  if (c.resource) {
    const [verb, group, full, name, namespace] = c.resource;
    const [resource, subresource = ''] = full.split('/');
    spec.resourceAttributes = { verb, group: group === '' ? '' : naming.group(group), resource, subresource, name, namespace };
  } else {
    spec.nonResourceAttributes = { verb: c.path![0], path: c.path![1] };
  }
  const r = await s.admin.post(`/apis/${authz}/v1/subjectaccessreviews`, { apiVersion: `${authz}/v1`, kind: 'SubjectAccessReview', spec });
  if (r.status !== 200 && r.status !== 201) throw new Error(`SubjectAccessReview for ${describeCell(c)}: ${r.status} ${r.text()}`);
  return r.json<Obj>().status?.allowed === true;
}

/** Every n-th cell of each expectation, resource cells kubectl can name (no users/groups/signers). */
function kubectlSample(cells: Cell[], size: number): Cell[] {
  const eligible = cells.filter((c) => c.path || !['users', 'groups', 'signers', 'userextras'].includes(c.resource![2].split('/')[0]!));
  const pick = (list: Cell[], n: number) => Array.from({ length: n }, (_, i) => list[Math.floor(((i + 0.5) * list.length) / n)]!);
  return [...pick(eligible.filter((c) => c.expected), size / 2), ...pick(eligible.filter((c) => !c.expected), size / 2)];
}

async function canI(s: ServerProcess, mode: NamingMode, c: Cell): Promise<boolean> {
  const naming = createNaming(mode);
  const args = ['auth', 'can-i', `--as=${userOf(c.row, c.binding)}`, ...matrix.groups.map((g) => `--as-group=${g}`)];
  if (c.resource) {
    const [verb, group, full, name, namespace] = c.resource;
    const [resource, subresource] = full.split('/');
    const qualified = group === '' ? resource! : `${resource}.${naming.group(group)}`;
    args.push(verb, name ? `${qualified}/${name}` : qualified);
    if (subresource) args.push(`--subresource=${subresource}`);
    args.push(namespace ? `--namespace=${namespace}` : '--all-namespaces=false');
  } else {
    args.push(c.path![0], c.path![1]);
  }
  const r = await kubectl(s.kubeconfig, args);
  const answer = r.stdout.trim().split('\n').pop();
  if (answer !== 'yes' && answer !== 'no') throw new Error(`kubectl ${args.join(' ')}: ${r.code} ${r.stdout} ${r.stderr}`);
  return answer === 'yes';
}

describe('authorization matrix (--naming=cluster)', () => {
  let s: ServerProcess;
  const cells = allCells();
  beforeAll(async () => {
    s = await startPolicyServer('cluster');
    await bindRows(s, 'cluster');
    // Bindings are in the authorizer once the last one decides.
    const last = cells.filter((c) => c.expected && c.binding !== 'none').at(-1)!;
    await waitFor(() => review(s, 'cluster', last), 'the bindings to reach the authorizer');
  });
  afterAll(async () => {
    await s?.stop();
  });

  it(`every cell matches the table generated from upstream's bootstrap policy (${matrix.cells} cells)`, async () => {
    expect(cells.length).toBe(matrix.cells);
    expect(cells.filter((c) => c.expected).length).toBe(matrix.allowed);
    const mismatches: string[] = [];
    await pool(cells, 32, async (c) => {
      const allowed = await review(s, 'cluster', c);
      if (allowed !== c.expected) mismatches.push(`${describeCell(c)}: expected ${c.expected ? 'allowed' : 'denied'}, got ${allowed ? 'allowed' : 'denied'}`);
    });
    expect(mismatches.slice(0, 50), `${mismatches.length} mismatches of ${cells.length}`).toEqual([]);
  }, 180_000);

  describe('a user with edit', () => {
    let edit: ApiClient;
    const rbac = createNaming('cluster').group('rbac.authorization.k8s.io');
    const ns = 'edit-escalation';
    beforeAll(async () => {
      expect((await s.admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status).toBeLessThan(300);
      const binding = { apiVersion: `${rbac}/v1`, kind: 'RoleBinding', metadata: { name: 'editor', namespace: ns }, roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'edit' }, subjects: [{ kind: 'User', apiGroup: rbac, name: 'editor' }] };
      expect((await s.admin.post(`/apis/${rbac}/v1/namespaces/${ns}/rolebindings`, binding)).status).toBeLessThan(300);
      const p = pkiPaths(s.dataDir);
      const ca = await loadCertificateAuthority(readFileSync(p.caCert, 'utf8'), readFileSync(p.caKey, 'utf8'));
      const cert = await issueCertificate(ca, { commonName: 'editor', organizations: [], usage: 'client' });
      edit = new ApiClient(s.url, { caPem: readFileSync(p.caCert, 'utf8'), ...cert });
      await waitFor(async () => (await edit.get(`/api/v1/namespaces/${ns}/configmaps`)).status === 200, 'the edit binding');
    });
    afterAll(() => edit?.close());

    const grant = (name: string, role: string) => ({
      apiVersion: `${rbac}/v1`, kind: 'RoleBinding', metadata: { name, namespace: ns },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: role }, subjects: [{ kind: 'User', apiGroup: rbac, name: 'editor' }],
    });

    it('writes what edit allows', async () => {
      expect((await edit.post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mine' } })).status).toBeLessThan(300);
    });
    it('cannot create a RoleBinding granting admin or cluster-admin, nor read or write roles', async () => {
      for (const role of ['admin', 'cluster-admin', 'edit']) {
        const r = await edit.post(`/apis/${rbac}/v1/namespaces/${ns}/rolebindings`, grant(`to-${role}`, role));
        expect(r.status, role).toBe(403);
      }
      expect((await edit.get(`/apis/${rbac}/v1/namespaces/${ns}/rolebindings`)).status).toBe(403);
      expect((await edit.get(`/apis/${rbac}/v1/namespaces/${ns}/roles`)).status).toBe(403);
      const role = { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: { name: 'more', namespace: ns }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] };
      expect((await edit.post(`/apis/${rbac}/v1/namespaces/${ns}/roles`, role)).status).toBe(403);
    });
    it('cannot bind cluster-admin cluster-wide', async () => {
      const crb = { apiVersion: `${rbac}/v1`, kind: 'ClusterRoleBinding', metadata: { name: 'editor-admin' }, roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'User', apiGroup: rbac, name: 'editor' }] };
      expect((await edit.post(`/apis/${rbac}/v1/clusterrolebindings`, crb)).status).toBe(403);
    });
    it('cannot impersonate users or groups (service accounts of its namespace only)', async () => {
      expect((await edit.get(`/api/v1/namespaces/${ns}/configmaps`, { 'Impersonate-User': 'admin' })).status).toBe(403);
      expect((await edit.get(`/api/v1/namespaces/${ns}/configmaps`, { 'Impersonate-User': 'editor', 'Impersonate-Group': 'system:masters' })).status).toBe(403);
    });
  });

});

describe.skipIf(!hasKubectl)('authorization matrix sample through kubectl (--naming=kubernetes)', () => {
  let s: ServerProcess;
  const cells = allCells();
  const sample = kubectlSample(cells, 20);
  beforeAll(async () => {
    s = await startPolicyServer('kubernetes');
    await bindRows(s, 'kubernetes');
    const last = cells.filter((c) => c.expected && c.binding !== 'none').at(-1)!;
    await waitFor(() => review(s, 'kubernetes', last), 'the bindings to reach the authorizer');
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('kubectl auth can-i and SubjectAccessReview agree with the table', async () => {
    const mismatches: string[] = [];
    await pool(sample, 4, async (c) => {
      if ((await canI(s, 'kubernetes', c)) !== c.expected) mismatches.push(`kubectl: ${describeCell(c)}`);
    });
    // The same subset of the table through SubjectAccessReview: every row, a stride of columns.
    const subset = cells.filter((_, i) => i % 7 === 0);
    await pool(subset, 32, async (c) => {
      if ((await review(s, 'kubernetes', c)) !== c.expected) mismatches.push(`SAR: ${describeCell(c)}`);
    });
    expect(mismatches.slice(0, 50), `${mismatches.length} mismatches`).toEqual([]);
  }, 120_000);

  it.skipIf(!hasKubectl)('kubectl auth can-i --list for a view user shows its RBAC rules', async () => {
    const row = matrix.rows.findIndex(([role, binding]) => role === 'view' && binding === 'rb');
    const r = await kubectl(s.kubeconfig, ['auth', 'can-i', '--list', `--as=${userOf(row, 'rb')}`, `--namespace=${matrix.namespace}`]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    const line = (resource: string) => lines.find((l) => l.split(/\s+/)[0] === resource);
    expect(line('pods')).toMatch(/\[get list watch\]/);
    expect(line('deployments.apps')).toMatch(/\[get list watch\]/);
    expect(line(`selfsubjectaccessreviews.${createNaming('kubernetes').group('authorization.k8s.io')}`)).toMatch(/\[create\]/);
    expect(lines.some((l) => /^\s*\[\/api\/\*\]\s+\[\]\s+\[get\]/.test(l))).toBe(true);
    expect(line('secrets')).toBeUndefined();
  });
});
