import { describe, expect, it } from 'vitest';
import { CelCompileError, celEnvironment, compileExpression } from '../cel/cel.js';
import type { UserInfo } from '../auth/user.js';
import { authorize, type Attributes, type Authorizer, type Decision } from './authorizer.js';
import { authorizerFor, MAX_CHECKS, registerAuthorizerLibrary, type CelAuthorizerContext } from './cel-authorizer.js';

/** A small RBAC-like table: a rule grants verbs on group/resource[/subresource] in a namespace, names optional. */
interface Rule {
  subject: string; // user name or group name
  verbs: string[];
  group?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  names?: string[];
  path?: string;
}

function tableAuthorizer(rules: Rule[]): Authorizer & { asked: Attributes[] } {
  const asked: Attributes[] = [];
  return {
    name: 'table',
    asked,
    authorize(a: Attributes): Decision {
      asked.push(a);
      for (const [i, r] of rules.entries()) {
        if (r.subject !== a.user.name && !a.user.groups.includes(r.subject)) continue;
        if (!r.verbs.includes(a.verb)) continue;
        if (a.isResourceRequest) {
          if (r.path !== undefined || r.group !== a.apiGroup || r.resource !== a.resource || (r.subresource ?? '') !== a.subresource) continue;
          if (r.namespace !== undefined && r.namespace !== a.namespace) continue;
          if (r.names && !r.names.includes(a.name)) continue;
        } else if (r.path !== a.path) continue;
        return { decision: 'allow', reason: `rule ${i}` };
      }
      return { decision: 'noOpinion', reason: '' };
    },
  };
}

const jane: UserInfo = { name: 'jane', groups: ['devs', 'system:authenticated'] };

const RULES: Rule[] = [
  { subject: 'jane', verbs: ['update'], group: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'ns', names: ['x'] },
  { subject: 'devs', verbs: ['get', 'list'], group: '', resource: 'pods', namespace: 'ns' },
  { subject: 'system:authenticated', verbs: ['get'], path: '/healthz' },
  { subject: 'system:serviceaccounts:ns', verbs: ['list'], group: '', resource: 'secrets' },
  { subject: 'jane', verbs: ['list'], group: '', resource: 'pods', namespace: 'other' },
];

function context(table = tableAuthorizer(RULES), user = jane, extra: Partial<CelAuthorizerContext> = {}): CelAuthorizerContext & { table: ReturnType<typeof tableAuthorizer> } {
  return { authorize: (a) => authorize([table], a), user, table, ...extra };
}

/** An admission-like environment: `object` and `names` beside the library's `authorizer`. */
const env = registerAuthorizerLibrary(celEnvironment({ object: 'map', names: 'list<string>' }));
const compile = (expr: string, path = 'expr') => compileExpression(env, expr, path);
const run = (expr: string, ctx: CelAuthorizerContext = context(), variables: Record<string, unknown> = {}): Promise<unknown> =>
  compile(expr).runAsync({ object: {}, names: [], ...variables, authorizer: authorizerFor(ctx) });

describe('CEL authorizer library', () => {
  it('checks a resource with group, resource, subresource, namespace and name', async () => {
    const chain = "authorizer.group('apps').resource('deployments').subresource('scale').namespace('ns').name('x')";
    const ctx = context();
    expect(await run(`${chain}.check('update').allowed()`, ctx)).toBe(true);
    expect(ctx.table.asked[0]).toMatchObject({ verb: 'update', isResourceRequest: true, apiGroup: 'apps', apiVersion: '*', resource: 'deployments', subresource: 'scale', namespace: 'ns', name: 'x', user: jane });
    expect(await run(`${chain}.check('delete').allowed()`)).toBe(false);
    expect(await run("authorizer.group('apps').resource('deployments').subresource('scale').namespace('ns').name('y').check('update').allowed()")).toBe(false);
    expect(await run(`${chain}.check('update').reason()`)).toBe('rule 0');
    expect(await run(`${chain}.check('update').errored()`)).toBe(false);
  });

  it('checks a non-resource path', async () => {
    expect(await run("authorizer.path('/healthz').check('get').allowed()")).toBe(true);
    expect(await run("authorizer.path('/metrics').check('get').allowed()")).toBe(false);
  });

  it('checks as a service account', async () => {
    const ctx = context();
    expect(await run("authorizer.serviceAccount('ns', 'builder').group('').resource('secrets').check('list').allowed()", ctx)).toBe(true);
    expect(ctx.table.asked[0]!.user).toEqual({ name: 'system:serviceaccount:ns:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'] });
    expect(await run("authorizer.serviceAccount('other', 'builder').group('').resource('secrets').check('list').allowed()")).toBe(false);
    // The requesting user itself may not.
    expect(await run("authorizer.group('').resource('secrets').check('list').allowed()")).toBe(false);
  });

  it('combines checks with the rest of CEL, asking only what the evaluation needs, each question once', async () => {
    const ctx = context();
    const expr = [
      "authorizer.group('').resource('pods').namespace(object.ns).check('get').allowed()",
      "  ? authorizer.group('').resource('pods').namespace(object.ns).check('list').allowed() && authorizer.group('').resource('pods').namespace(object.ns).check('get').allowed()",
      "  : authorizer.path('/never').check('get').allowed()",
    ].join('\n');
    expect(await run(expr, ctx, { object: { ns: 'ns' } })).toBe(true);
    expect(ctx.table.asked.map((a) => `${a.verb} ${a.resource || a.path}`)).toEqual(['get pods', 'list pods']);

    const other = context();
    expect(await run(expr, other, { object: { ns: 'other' } })).toBe(false);
    expect(other.table.asked.map((a) => `${a.verb} ${a.resource || a.path}`)).toEqual(['get pods', 'get /never']);
  });

  it('works inside macros over lists', async () => {
    const ctx = context();
    expect(await run("object.ns.all(n, authorizer.group('').resource('pods').namespace(n).check('list').allowed())", ctx, { object: { ns: ['ns', 'other'] } })).toBe(true);
    expect(await run("object.ns.exists(n, !authorizer.group('').resource('pods').namespace(n).check('list').allowed())", ctx, { object: { ns: ['ns', 'other', 'third'] } })).toBe(true);
    expect(await run("object.ns.all(n, authorizer.group('').resource('pods').namespace(n).check('list').allowed())", ctx, { object: { ns: ['ns', 'third'] } })).toBe(false);
  });

  it('passes field and label selectors parsed', async () => {
    const ctx = context();
    await run("authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1').labelSelector('app=web').check('list').allowed()", ctx);
    expect(ctx.table.asked[0]!.fieldSelector).toEqual([{ field: 'spec.nodeName', operator: '=', value: 'n1' }]);
    expect(ctx.table.asked[0]!.labelSelector?.[0]).toMatchObject({ key: 'app', values: ['web'] });
  });

  it('offers requestResource when the evaluation is about a request', async () => {
    const ctx = context(undefined, jane, { requestResource: { group: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'ns', name: 'x' } });
    expect(await run("authorizer.requestResource.check('update').allowed()", ctx)).toBe(true);
    await expect(run("authorizer.requestResource.check('update').allowed()")).rejects.toThrow(/requestResource/);
  });

  it('reports a chain that throws as an errored decision, not allowed', async () => {
    const failing: CelAuthorizerContext = {
      user: jane,
      authorize: () => {
        throw new Error('webhook unreachable');
      },
    };
    expect(await run("authorizer.path('/x').check('get').errored()", failing)).toBe(true);
    expect(await run("authorizer.path('/x').check('get').error()", failing)).toBe('webhook unreachable');
    expect(await run("authorizer.path('/x').check('get').allowed()", failing)).toBe(false);
  });

  it('refuses wrong chains, wrong arguments and syntax errors at load, naming the field', () => {
    const path = 'spec.validations[0].expression';
    expect(() => compile("authorizer.check('get')", path)).toThrow(CelCompileError);
    expect(() => compile("authorizer.check('get')", path)).toThrow(/kubernetes.authorization.Authorizer.check\(string\)/);
    expect(() => compile("authorizer.group(1).resource('pods').check('get').allowed()", path)).toThrow(/kubernetes.authorization.Authorizer.group\(int\)/);
    expect(() => compile("authorizer.path('/x').check('get') == true", path)).toThrow(CelCompileError);
    expect(() => compile("authorizer.group('apps').resource(", path)).toThrow(/spec.validations\[0\].expression: Invalid value: "authorizer.group\('apps'\).resource\(": compilation failed/);
    expect(compile("authorizer.path('/x').check('get').allowed()").type).toBe('bool');
  });

  it(`caps the distinct checks of one evaluation at ${MAX_CHECKS}`, async () => {
    const ctx = context();
    const names = Array.from({ length: MAX_CHECKS + 1 }, (_, i) => `n${i}`);
    await expect(run("names.all(n, !authorizer.group('').resource('pods').namespace(n).check('get').allowed())", ctx, { names })).rejects.toThrow(/more than 32 authorization checks/);
    expect(ctx.table.asked).toHaveLength(MAX_CHECKS);
  });
});
