import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..');
type Matrix = { resourceColumns: string[][]; pathColumns: string[][]; rows: [string, string, string, string][]; cells: number };
const matrix = JSON.parse(readFileSync(join(root, 'e2e', 'fixtures', 'authz-matrix.json'), 'utf8')) as Matrix;

/** The table's answer for one cell; undefined when the cell is not checked. */
function cell(role: string, binding: string, verb: string, group: string, resource: string, namespaced = true): boolean | undefined {
  const row = matrix.rows.find(([r, b]) => r === role && b === binding);
  const i = matrix.resourceColumns.findIndex(([v, g, res, name, ns]) => v === verb && g === group && res === resource && name === '' && (ns !== '') === namespaced);
  if (!row || i < 0) throw new Error(`no cell ${role} ${binding} ${verb} ${group}/${resource}`);
  const bit = row[2][i];
  return bit === '-' ? undefined : bit === '1';
}

describe('gen-authz-matrix', () => {
  it('the committed table is what the generator computes from the fixtures', () => {
    execFileSync(process.execPath, [join(root, 'tools', 'gen-authz-matrix.mjs'), '--check'], { stdio: 'pipe' });
  });

  it('agrees with facts of upstream 1.32 policy', () => {
    expect(cell('cluster-admin', 'crb', 'escalate', 'rbac.authorization.k8s.io', 'clusterroles', false)).toBe(true);
    // Aggregation resolved: admin holds edit's and view's rules, edit has no RBAC rights.
    expect(cell('admin', 'rb', 'create', 'rbac.authorization.k8s.io', 'rolebindings')).toBe(true);
    expect(cell('admin', 'rb', 'create', '', 'pods')).toBe(true);
    expect(cell('edit', 'crb', 'get', 'rbac.authorization.k8s.io', 'roles')).toBe(false);
    expect(cell('edit', 'rb', 'impersonate', '', 'serviceaccounts')).toBe(true);
    expect(cell('edit', 'crb', 'impersonate', '', 'users', false)).toBe(false);
    expect(cell('view', 'rb', 'list', '', 'pods')).toBe(true);
    expect(cell('view', 'rb', 'get', '', 'secrets')).toBe(false);
    // A RoleBinding grants nothing at cluster scope: those cells are the default bindings' row.
    expect(cell('view', 'rb', 'get', '', 'namespaces', false)).toBeUndefined();
    expect(cell('view', 'crb', 'get', '', 'namespaces', false)).toBe(true);
    expect(cell('', 'none', 'create', 'authorization.k8s.io', 'selfsubjectaccessreviews', false)).toBe(true);
    expect(cell('', 'none', 'get', '', 'namespaces', false)).toBe(false);
    expect(matrix.cells).toBeGreaterThan(20_000);
  });
});
