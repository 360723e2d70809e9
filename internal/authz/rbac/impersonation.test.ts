// Impersonation decided by RBAC in a real in-process server (TLS, client certificates): the
// `impersonate` verb on users, groups, service accounts, uids and userextras, limited by
// resourceNames, with upstream's 403 text for a target not granted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../testserver/api-client.js';
import { startTestServer, type TestServer } from '../../testserver/test-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies are free-form JSON
const RBAC = 'rbac.authorization.cluster.io';
const WHOAMI = '/apis/authentication.cluster.io/v1/selfsubjectreviews';

describe('impersonation through RBAC', () => {
  let t: TestServer;
  let carol: ApiClient;
  const whoami = async (headers: Record<string, string>) => {
    const r = await carol.post(WHOAMI, {}, headers);
    return r.status < 300 ? r.json<Obj>().status.userInfo : { status: r.status, message: r.json<Obj>().message as string };
  };

  beforeAll(async () => {
    t = await startTestServer();
    const role = {
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRole',
      metadata: { name: 'impersonate-some' },
      rules: [
        { apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['bob'] },
        { apiGroups: [''], resources: ['groups'], verbs: ['impersonate'], resourceNames: ['qa', 'system:authenticated'] },
        { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'], resourceNames: ['robot'] },
        { apiGroups: ['authentication.cluster.io'], resources: ['uids'], verbs: ['impersonate'], resourceNames: ['b-1'] },
        { apiGroups: ['authentication.cluster.io'], resources: ['userextras/scope'], verbs: ['impersonate'], resourceNames: ['read'] },
      ],
    };
    expect((await t.admin.post(`/apis/${RBAC}/v1/clusterroles`, role)).status).toBeLessThan(300);
    const binding = { apiVersion: `${RBAC}/v1`, kind: 'ClusterRoleBinding', metadata: { name: 'carol-impersonates' }, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'impersonate-some' }, subjects: [{ kind: 'User', apiGroup: RBAC, name: 'carol' }] };
    expect((await t.admin.post(`/apis/${RBAC}/v1/clusterrolebindings`, binding)).status).toBeLessThan(300);
    carol = await t.clientFor('carol');
    // The binding reaches the authorizer through the watch cache.
    for (let i = 0; i < 100 && (await carol.post(WHOAMI, {}, { 'impersonate-user': 'bob' })).status !== 200; i++) await new Promise((r) => setTimeout(r, 20));
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('impersonates the granted user with granted groups, uid and extra', async () => {
    expect(await whoami({ 'impersonate-user': 'bob', 'impersonate-group': 'qa', 'impersonate-uid': 'b-1', 'impersonate-extra-scope': 'read' })).toEqual({
      username: 'bob',
      uid: 'b-1',
      groups: ['qa', 'system:authenticated'],
      extra: { scope: ['read'] },
    });
  });

  it.each<[string, Record<string, string>, string]>([
    ['another user', { 'impersonate-user': 'dave' }, 'users "dave" is forbidden: User "carol" cannot impersonate resource "users" in API group "" at the cluster scope'],
    ['a group not granted', { 'impersonate-user': 'bob', 'impersonate-group': 'admins' }, 'groups "admins" is forbidden: User "carol" cannot impersonate resource "groups" in API group "" at the cluster scope'],
    ['system:masters', { 'impersonate-user': 'bob', 'impersonate-group': 'system:masters' }, 'groups "system:masters" is forbidden'],
    ['another uid', { 'impersonate-user': 'bob', 'impersonate-uid': 'b-2' }, 'cannot impersonate resource "uids"'],
    ['another extra value', { 'impersonate-user': 'bob', 'impersonate-extra-scope': 'write' }, 'cannot impersonate resource "userextras/scope"'],
  ])('refuses %s with 403', async (_what, headers, message) => {
    const r = await whoami(headers);
    expect(r.status).toBe(403);
    expect(r.message).toContain(message);
  });

  it('impersonates a service account by its name (any namespace the rule allows) and not another', async () => {
    expect(await whoami({ 'impersonate-user': 'system:serviceaccount:team:robot' })).toMatchObject({ username: 'system:serviceaccount:team:robot', groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'] });
    const other = await whoami({ 'impersonate-user': 'system:serviceaccount:team:builder' });
    expect(other.status).toBe(403);
    expect(other.message).toContain('cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team"');
  });

  it('asks about a service account in its namespace: a RoleBinding there grants it, nowhere else', async () => {
    const role = { apiVersion: `${RBAC}/v1`, kind: 'Role', metadata: { name: 'impersonate-sas', namespace: 'ops' }, rules: [{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] }] };
    expect((await t.admin.post('/api/v1/namespaces', { metadata: { name: 'ops' } })).status).toBeLessThan(300);
    expect((await t.admin.post(`/apis/${RBAC}/v1/namespaces/ops/roles`, role)).status).toBeLessThan(300);
    const binding = { apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: { name: 'carol', namespace: 'ops' }, roleRef: { apiGroup: RBAC, kind: 'Role', name: 'impersonate-sas' }, subjects: [{ kind: 'User', apiGroup: RBAC, name: 'carol' }] };
    expect((await t.admin.post(`/apis/${RBAC}/v1/namespaces/ops/rolebindings`, binding)).status).toBeLessThan(300);
    let user = await whoami({ 'impersonate-user': 'system:serviceaccount:ops:deployer' });
    for (let i = 0; i < 100 && user.status === 403; i++) {
      await new Promise((r) => setTimeout(r, 20));
      user = await whoami({ 'impersonate-user': 'system:serviceaccount:ops:deployer' });
    }
    expect(user).toMatchObject({ username: 'system:serviceaccount:ops:deployer', groups: ['system:serviceaccounts', 'system:serviceaccounts:ops', 'system:authenticated'] });
    // Groups given replace the service account's fixed ones (and must be granted themselves).
    expect(await whoami({ 'impersonate-user': 'system:serviceaccount:ops:deployer', 'impersonate-group': 'qa' })).toMatchObject({ groups: ['qa', 'system:authenticated'] });
    const elsewhere = await whoami({ 'impersonate-user': 'system:serviceaccount:default:deployer' });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.message).toBe('serviceaccounts "deployer" is forbidden: User "carol" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "default"');
  });
});
