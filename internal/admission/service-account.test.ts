// The ServiceAccount plugin: a table of pods through the plugin with a fixed set of accounts
// (what the pod becomes, or upstream's refusal), then a real in-process server under both
// namings: a created pod runs as `default` with the kube-api-access projection in every
// container, a missing account is refused, automount false on the pod or the account is kept,
// and an update may not change the account.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { admissionOutcome } from '../testserver/admission-outcome.js';
import { startTestServer, type TestServer } from '../testserver/test-server.js';
import type { AdmissionRequest, JsonObject } from './admission.js';
import { serviceAccountPlugin, tokenVolume } from './service-account.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- pods are free-form JSON

const naming = createNaming('kubernetes');
const MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';
// Frozen all the way down: the server hands the plugin the cache's shared decoded account,
// which it must only read (a write to a frozen object throws in a module).
const deepFreeze = <T>(v: T): T => {
  if (typeof v === 'object' && v !== null) for (const child of Object.values(Object.freeze(v))) deepFreeze(child);
  return v;
};
const accounts: Record<string, Obj> = deepFreeze({
  default: { metadata: { name: 'default' } },
  quiet: { metadata: { name: 'quiet' }, automountServiceAccountToken: false },
  puller: { metadata: { name: 'puller' }, imagePullSecrets: [{ name: 'registry' }] },
  strict: { metadata: { name: 'strict', annotations: { 'kubernetes.io/enforce-mountable-secrets': 'true' } }, secrets: [{ name: 'ok' }] },
});
const plugin = serviceAccountPlugin({
  naming,
  rootCaConfigMap: 'kube-root-ca.crt',
  getServiceAccount: async (_ns, name) => accounts[name] as JsonObject | undefined,
  retryDelayMs: () => 1,
});

const request = (object: Obj, fields: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  operation: 'CREATE',
  resource: { group: '', resource: 'pods' } as never,
  subresource: '',
  namespace: 'ns',
  name: object.metadata?.name ?? 'p',
  object,
  oldObject: undefined,
  user: { name: 'u', groups: [] },
  dryRun: false,
  ...fields,
});

/** Both phases, as the chain runs them; the pod as it comes out, or the refusal. */
const admit = (object: Obj, fields: Partial<AdmissionRequest> = {}): Promise<Obj | string> => admissionOutcome(plugin, request(object, fields));

const pod = (spec: Obj = {}, meta: Obj = {}): Obj => ({ metadata: { name: 'p', ...meta }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } });
const volumeName = (p: Obj): string => p.spec.volumes.find((v: Obj) => v.name.startsWith('kube-api-access-')).name;

describe('ServiceAccount plugin', () => {
  it('defaults the account and mounts the token projection in every container and init container', async () => {
    const out = (await admit(pod({ initContainers: [{ name: 'init', image: 'i' }] }))) as Obj;
    expect(out.spec.serviceAccountName).toBe('default');
    expect(out.spec.serviceAccount).toBe('default');
    const name = volumeName(out);
    expect(name).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(out.spec.volumes).toEqual([tokenVolume(name, 'kube-root-ca.crt')]);
    expect(tokenVolume(name, 'x').projected).toEqual({
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
        { configMap: { name: 'x', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    });
    for (const c of [...out.spec.containers, ...out.spec.initContainers]) expect(c.volumeMounts).toEqual([{ name, readOnly: true, mountPath: MOUNT }]);
  });

  it.each([
    ['automount false on the pod', pod({ automountServiceAccountToken: false }), 0],
    ['automount false on the account', pod({ serviceAccountName: 'quiet' }), 0],
    ['the pod wins over the account', pod({ serviceAccountName: 'quiet', automountServiceAccountToken: true }), 1],
    ['a container mounting the path itself', pod({ containers: [{ name: 'c', image: 'i', volumeMounts: [{ name: 'mine', mountPath: MOUNT }] }], volumes: [{ name: 'mine', emptyDir: {} }] }), 0],
  ])('token volumes with %s: %i', async (_what, input, volumes) => {
    const out = (await admit(input)) as Obj;
    expect(((out.spec.volumes ?? []) as Obj[]).filter((v) => v.name.startsWith('kube-api-access-'))).toHaveLength(volumes);
  });

  it('copies the account’s imagePullSecrets only when the pod names none', async () => {
    expect(((await admit(pod({ serviceAccountName: 'puller' }))) as Obj).spec.imagePullSecrets).toEqual([{ name: 'registry' }]);
    expect(((await admit(pod({ serviceAccountName: 'puller', imagePullSecrets: [{ name: 'own' }] }))) as Obj).spec.imagePullSecrets).toEqual([{ name: 'own' }]);
  });

  it.each([
    ['a missing account', pod({ serviceAccountName: 'nope' }), '403 pods "p" is forbidden: error looking up service account ns/nope: serviceaccount "nope" not found'],
    ['a mirror pod naming an account', pod({ serviceAccountName: 'default' }, { annotations: { 'kubernetes.io/config.mirror': 'h' } }), '403 pods "p" is forbidden: a mirror pod may not reference service accounts'],
    ['a mirror pod with a secret volume', pod({ volumes: [{ name: 's', secret: { secretName: 's' } }] }, { annotations: { 'kubernetes.io/config.mirror': 'h' } }), '403 pods "p" is forbidden: a mirror pod may not reference secrets'],
    [
      'a mirror pod projecting a token',
      pod({ volumes: [{ name: 't', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }] }, { annotations: { 'kubernetes.io/config.mirror': 'h' } }),
      '403 pods "p" is forbidden: a mirror pod may not use ServiceAccountToken volume projections',
    ],
    ['an enforcing account and another secret volume', pod({ serviceAccountName: 'strict', volumes: [{ name: 's', secret: { secretName: 'other' } }] }), '403 pods "p" is forbidden: volume with secret.secretName="other" is not allowed because service account strict does not reference that secret'],
    [
      'an enforcing account and an env secret',
      pod({ serviceAccountName: 'strict', automountServiceAccountToken: false, containers: [{ name: 'c', image: 'i', env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 'other', key: 'k' } } }] }] }),
      '403 pods "p" is forbidden: container c with envVar E referencing secret.secretName="other" is not allowed because service account strict does not reference that secret',
    ],
  ])('refuses %s', async (_what, input, message) => {
    expect(await admit(input)).toBe(message);
  });

  it('leaves a mirror pod as it is', async () => {
    const mirror = pod({}, { annotations: { 'kubernetes.io/config.mirror': 'h' } });
    const before = JSON.stringify(mirror);
    expect(JSON.stringify(await admit(mirror))).toBe(before);
  });

  it('checks ephemeral containers against an enforcing account, and nothing else on update', async () => {
    const withEphemeral = pod({ serviceAccountName: 'strict', ephemeralContainers: [{ name: 'debug', image: 'i', envFrom: [{ secretRef: { name: 'other' } }] }] });
    expect(await admit(withEphemeral, { operation: 'UPDATE', subresource: 'ephemeralcontainers' })).toBe(
      '403 pods "p" is forbidden: container debug with envFrom referencing secret.secretName="other" is not allowed because service account strict does not reference that secret',
    );
    const plain = pod({ serviceAccountName: 'default' });
    expect(await admit(plain, { operation: 'UPDATE' })).toEqual(plain);
  });
});

for (const mode of ['cluster', 'kubernetes'] as const) {
  describe(`ServiceAccount admission in a server (--naming=${mode})`, () => {
    const n = createNaming(mode);
    let t: TestServer;
    const pods = '/api/v1/namespaces/default/pods';
    beforeAll(async () => {
      t = await startTestServer({ naming: mode });
    });
    afterAll(async () => {
      await t?.stop();
    });

    it('runs a pod as default with the token projection, refuses a missing account, keeps the account on update', async () => {
      const r = await t.admin.post(pods, pod());
      expect(r.status, r.text()).toBe(200);
      const created = r.json<Obj>();
      expect(created.spec.serviceAccountName).toBe('default');
      const name = volumeName(created);
      expect(created.spec.containers[0].volumeMounts).toEqual([{ name, readOnly: true, mountPath: `/var/run/secrets/${n.labelDomain}/serviceaccount` }]);
      expect(created.spec.volumes[0].projected.sources[1].configMap.name).toBe(mode === 'kubernetes' ? 'kube-root-ca.crt' : 'cluster-root-ca.crt');

      const missing = await t.admin.post(pods, { ...pod(), metadata: { name: 'q' }, spec: { serviceAccountName: 'nope', containers: [{ name: 'c', image: 'i' }] } });
      expect(missing.status).toBe(403);
      expect(missing.json<Obj>().message).toBe('pods "q" is forbidden: error looking up service account default/nope: serviceaccount "nope" not found');

      const changed = await t.admin.put(`${pods}/p`, { ...created, spec: { ...created.spec, serviceAccountName: 'other', serviceAccount: 'other' } });
      expect(changed.status).toBe(422);
      expect(changed.json<Obj>().message).toContain('pod updates may not change fields other than');

      const quiet = await t.admin.post(pods, { metadata: { name: 'quiet' }, spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'i' }] } });
      expect(quiet.json<Obj>().spec.volumes).toBeUndefined();
    });
  });
}
