// internal/controllers/serviceaccount-controllers owns three controllers upstream's controller
// manager runs for service accounts, each leader-only:
//   serviceaccount          every active namespace has a `default` ServiceAccount (recreated
//                           when deleted);
//   root-ca-cert-publisher  every active namespace has the CA ConfigMap (`kube-root-ca.crt`, or
//                           the naming's name) with key `ca.crt` holding the cluster CA;
//   serviceaccount-token    secrets of type `<domain>/service-account-token` naming a
//                           ServiceAccount get a legacy token, the CA and the namespace; a secret
//                           whose ServiceAccount is gone (or has another uid) is deleted, and so
//                           are a deleted ServiceAccount's token secrets.
// Writes go through the registries like any client's; reads come from the watch cache.
// Imports: apierrors, auth (signer), naming, registry, schema, watchcache, log, reconciler.

import { isAlreadyExists, isConflict, isNotFound } from '../apierrors/status.js';
import type { ServiceAccountTokenSigner } from '../auth/serviceaccount-token.js';
import type { Logger } from '../log/logger.js';
import type { Naming } from '../naming/naming.js';
import { namespacePrefix, objectKey, resourcePrefix } from '../registry/keys.js';
import type { RegistrySet } from '../registry/registry-set.js';
import type { ApiCatalog, ResourceInfo } from '../schema/catalog.js';
import type { CacheEntry } from '../watchcache/types.js';
import type { WatchCache } from '../watchcache/watch-cache.js';
import { Reconciler } from './reconciler.js';

type Obj = Record<string, unknown>;
type Meta = { name?: string; namespace?: string; uid?: string; resourceVersion?: string; deletionTimestamp?: string; annotations?: Record<string, string>; labels?: Record<string, string> };

export const rootCaConfigMapName = (naming: Naming): string => (naming.mode === 'kubernetes' ? 'kube-root-ca.crt' : `${naming.mode}-root-ca.crt`);
export const serviceAccountTokenSecretType = (naming: Naming): string => `${naming.labelDomain}/service-account-token`;

const parse = (e: CacheEntry): Obj => JSON.parse(e.bytes.toString('utf8')) as Obj;
const metaOf = (o: Obj): Meta => (o.metadata ?? {}) as Meta;

/** What the service-account controllers share. */
export interface ControllerEnv {
  registries: RegistrySet;
  catalog: ApiCatalog;
  cache: WatchCache;
  naming: Naming;
  log: Logger;
}

export class CoreObjects {
  constructor(readonly env: ControllerEnv, private readonly manager: string) {}

  resource(name: string): ResourceInfo {
    return this.env.catalog.resource('', 'v1', name)!;
  }

  get(resource: string, namespace: string, name: string): Obj | undefined {
    const r = this.resource(resource);
    const e = this.env.cache.resource(resourcePrefix(r)).get(objectKey(r, namespace, name));
    return e && !e.corrupt ? parse(e) : undefined;
  }

  list(resource: string, namespace: string): Obj[] {
    const r = this.resource(resource);
    return this.env.cache.resource(resourcePrefix(r)).list({ keyPrefix: namespacePrefix(r, namespace) }).entries.filter((e) => !e.corrupt).map(parse);
  }

  private ctx(namespace: string) {
    return { user: { name: `system:serviceaccount:kube-system:${this.manager}`, groups: ['system:masters', 'system:authenticated'] }, manager: this.manager, namespace, dryRun: false, warnings: [] as string[] };
  }

  async create(resource: string, namespace: string, obj: Obj): Promise<void> {
    const r = this.resource(resource);
    try {
      await this.env.registries.for(r)!.create(r, this.ctx(namespace), obj);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }

  /** Replaces the object, or its `subresource` (optimistic: a conflict is retried by the reconciler). */
  async update(resource: string, namespace: string, obj: Obj, subresource = ''): Promise<void> {
    const r = this.resource(resource);
    await this.env.registries.for(r)!.update(r, this.ctx(namespace), String(metaOf(obj).name), obj, subresource);
  }

  async delete(resource: string, namespace: string, name: string, uid: string): Promise<void> {
    const r = this.resource(resource);
    try {
      await this.env.registries.for(r)!.delete(r, this.ctx(namespace), name, { dryRun: false, preconditions: { uid } });
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }

  namespaceActive(name: string): boolean {
    const ns = this.get('namespaces', '', name);
    return ns !== undefined && !metaOf(ns).deletionTimestamp && (ns.status as { phase?: string } | undefined)?.phase !== 'Terminating';
  }
}

/** serviceaccount + root-ca-cert-publisher: the per-namespace objects. */
export function namespaceObjectsController(env: ControllerEnv, opts: { defaultServiceAccount: boolean; caPem: string | undefined }): Reconciler {
  const objects = new CoreObjects(env, 'serviceaccount-controller');
  const caName = rootCaConfigMapName(env.naming);
  const nsKey = (_t: string, e: CacheEntry) => [e.name];
  return new Reconciler(
    {
      name: 'serviceaccount-controller',
      sources: [
        { prefix: resourcePrefix(objects.resource('namespaces')), keys: (t, e) => (t === 'DELETED' ? [] : nsKey(t, e)) },
        ...(opts.defaultServiceAccount ? [{ prefix: resourcePrefix(objects.resource('serviceaccounts')), keys: (t: string, e: CacheEntry) => (t === 'DELETED' && e.name === 'default' ? [e.namespace] : []) }] : []),
        ...(opts.caPem !== undefined ? [{ prefix: resourcePrefix(objects.resource('configmaps')), keys: (t: string, e: CacheEntry) => (t !== 'ADDED' && e.name === caName ? [e.namespace] : []) }] : []),
      ],
      async reconcile(ns) {
        if (!objects.namespaceActive(ns)) return;
        if (opts.defaultServiceAccount && !objects.get('serviceaccounts', ns, 'default')) {
          await objects.create('serviceaccounts', ns, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: ns } });
        }
        if (opts.caPem !== undefined) {
          const want = { 'ca.crt': opts.caPem };
          const description = {
            [`${env.naming.labelDomain}/description`]:
              'Contains a CA bundle that can be used to verify the API server when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of clusters.',
          };
          const cm = objects.get('configmaps', ns, caName);
          if (!cm) {
            await objects.create('configmaps', ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: caName, namespace: ns, annotations: description }, data: want });
          } else if ((cm.data as Record<string, string> | undefined)?.['ca.crt'] !== opts.caPem) {
            await objects.update('configmaps', ns, { ...cm, data: { ...((cm.data as Obj | undefined) ?? {}), ...want } });
          }
        }
      },
    },
    env.cache,
    env.log,
  );
}

/** serviceaccount-token: legacy token secrets. */
export function tokensController(env: ControllerEnv, signer: ServiceAccountTokenSigner, caPem: string): Reconciler {
  const objects = new CoreObjects(env, 'tokens-controller');
  const type = serviceAccountTokenSecretType(env.naming);
  const nameAnnotation = `${env.naming.labelDomain}/service-account.name`;
  const uidAnnotation = `${env.naming.labelDomain}/service-account.uid`;
  return new Reconciler(
    {
      name: 'tokens-controller',
      sources: [
        {
          prefix: resourcePrefix(objects.resource('secrets')),
          keys: (t, e) => (t !== 'DELETED' && e.bytes.includes(type) ? [`secret/${e.namespace}/${e.name}`] : []),
        },
        { prefix: resourcePrefix(objects.resource('serviceaccounts')), keys: (t, e) => (t === 'DELETED' ? [`sa/${e.namespace}/${e.name}`] : []) },
      ],
      async reconcile(key) {
        const [kind, ns, name] = key.split('/') as [string, string, string];
        if (kind === 'sa') {
          // The account is gone: so are its token secrets.
          for (const s of objects.list('secrets', ns)) {
            const m = metaOf(s);
            if (s.type === type && m.annotations?.[nameAnnotation] === name) await objects.delete('secrets', ns, m.name!, m.uid!);
          }
          return;
        }
        const secret = objects.get('secrets', ns, name);
        if (!secret || secret.type !== type) return;
        const m = metaOf(secret);
        if (m.deletionTimestamp) return;
        const saName = m.annotations?.[nameAnnotation] ?? '';
        const wantUid = m.annotations?.[uidAnnotation] ?? '';
        let sa = objects.get('serviceaccounts', ns, saName);
        if (!sa) {
          // The cache may lag a moment behind a ServiceAccount created just before the secret.
          const r = objects.resource('serviceaccounts');
          sa = await env.registries.for(r)!.getEntry(ns, saName).then((e) => parse(e), () => undefined);
        }
        const saUid = sa ? String(metaOf(sa).uid ?? '') : '';
        if (!sa || (wantUid !== '' && wantUid !== saUid)) {
          await objects.delete('secrets', ns, name, m.uid!);
          return;
        }
        const data = (secret.data ?? {}) as Record<string, string>;
        if (data.token && data['ca.crt'] && data.namespace && wantUid !== '') return;
        const token = data.token ? Buffer.from(data.token, 'base64').toString('utf8') : await signer.mintLegacy(ns, { name: saName, uid: saUid }, name);
        const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
        await objects.update('secrets', ns, {
          ...secret,
          metadata: { ...m, annotations: { ...(m.annotations ?? {}), [uidAnnotation]: saUid } },
          data: { ...data, token: b64(token), 'ca.crt': b64(caPem), namespace: b64(ns) },
        });
      },
    },
    env.cache,
    env.log,
  );
}
