// internal/controllers/bootstrap-controllers owns the two bootstrap-token controllers (both off
// by default, as upstream; leader-only):
//   tokencleaner     deletes bootstrap-token secrets in the system namespace once expired (an
//                    expiration that does not parse counts as expired), and looks again when
//                    an unexpired one will expire;
//   bootstrapsigner  keeps `cluster-info` in the public namespace signed: one key
//                    `jws-kubeconfig-<id>` per usable signing token (usage-bootstrap-signing,
//                    not expired), stale signatures removed. The ConfigMap is created with a
//                    kubeconfig holding this server's URL and the cluster CA when it is missing.
// Imports: auth (bootstrap tokens), naming, registry, watchcache, log, reconciler,
// serviceaccount-controllers (CoreObjects).

import {
  BOOTSTRAP_SECRET_PREFIX, bootstrapTokenExpired, detachedSignature, secretData, usableBootstrapSecret,
} from '../auth/bootstrap-token.js';
import { resourcePrefix } from '../registry/keys.js';
import { Reconciler } from './reconciler.js';
import { CoreObjects, type ControllerEnv } from './serviceaccount-controllers.js';

export const CLUSTER_INFO = 'cluster-info';
export const PUBLIC_NAMESPACE = 'kube-public';
const SYSTEM_NAMESPACE = 'kube-system';
const JWS_PREFIX = 'jws-kubeconfig-';

type Obj = Record<string, unknown>;
const metaOf = (o: Obj) => (o.metadata ?? {}) as { name?: string; uid?: string; deletionTimestamp?: string };

/** The kubeconfig cluster-info carries (kubeadm's shape: one nameless cluster, no users). */
export function clusterInfoKubeconfig(server: string, caPem: string): string {
  return [
    'apiVersion: v1',
    'clusters:',
    '- cluster:',
    `    certificate-authority-data: ${Buffer.from(caPem, 'utf8').toString('base64')}`,
    `    server: ${server}`,
    '  name: ""',
    'contexts: null',
    'current-context: ""',
    'kind: Config',
    'preferences: {}',
    'users: null',
    '',
  ].join('\n');
}

export function tokenCleaner(env: ControllerEnv, secretType: string, now: () => Date = () => new Date()): Reconciler {
  const objects = new CoreObjects(env, 'token-cleaner');
  return new Reconciler(
    {
      name: 'token-cleaner',
      sources: [
        {
          prefix: resourcePrefix(objects.resource('secrets')),
          keys: (t, e) => (t !== 'DELETED' && e.namespace === SYSTEM_NAMESPACE && e.name.startsWith(BOOTSTRAP_SECRET_PREFIX) ? [e.name] : []),
        },
      ],
      async reconcile(name) {
        const secret = objects.get('secrets', SYSTEM_NAMESPACE, name);
        if (!secret || secret.type !== secretType || metaOf(secret).deletionTimestamp) return;
        const data = secretData(secret);
        const t = now();
        if (bootstrapTokenExpired(data, t)) {
          env.log.info('deleting expired bootstrap token', { secret: name });
          await objects.delete('secrets', SYSTEM_NAMESPACE, name, metaOf(secret).uid ?? '');
          return;
        }
        if (data.expiration) return Math.max(Date.parse(data.expiration) - t.getTime() + 10, 10);
      },
    },
    env.cache,
    env.log,
  );
}

export function bootstrapSigner(env: ControllerEnv, secretType: string, kubeconfig: () => string, now: () => Date = () => new Date()): Reconciler {
  const objects = new CoreObjects(env, 'bootstrap-signer');
  return new Reconciler(
    {
      name: 'bootstrap-signer',
      sources: [
        { prefix: resourcePrefix(objects.resource('configmaps')), keys: (_t, e) => (e.namespace === PUBLIC_NAMESPACE && e.name === CLUSTER_INFO ? ['sign'] : []) },
        { prefix: resourcePrefix(objects.resource('secrets')), keys: (_t, e) => (e.namespace === SYSTEM_NAMESPACE && e.name.startsWith(BOOTSTRAP_SECRET_PREFIX) ? ['sign'] : []) },
      ],
      async reconcile() {
        let cm = objects.get('configmaps', PUBLIC_NAMESPACE, CLUSTER_INFO);
        if (!cm) {
          if (!objects.namespaceActive(PUBLIC_NAMESPACE)) return 1000;
          await objects.create('configmaps', PUBLIC_NAMESPACE, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: CLUSTER_INFO, namespace: PUBLIC_NAMESPACE }, data: { kubeconfig: kubeconfig() } });
          // The creation's event brings this key back with the object in the cache.
          return;
        }
        const data = (cm.data ?? {}) as Record<string, string>;
        const content = data.kubeconfig;
        if (content === undefined) return;
        const t = now();
        const signatures: Record<string, string> = {};
        let nextExpiry = Infinity;
        for (const s of objects.list('secrets', SYSTEM_NAMESPACE)) {
          const name = metaOf(s).name ?? '';
          if (!name.startsWith(BOOTSTRAP_SECRET_PREFIX)) continue;
          const id = name.slice(BOOTSTRAP_SECRET_PREFIX.length);
          const usable = usableBootstrapSecret({ type: String(s.type ?? ''), data: secretData(s), deleting: Boolean(metaOf(s).deletionTimestamp) }, secretType, id, t);
          if (!usable || usable['usage-bootstrap-signing'] !== 'true' || !usable['token-secret']) continue;
          signatures[`${JWS_PREFIX}${id}`] = await detachedSignature(content, id, usable['token-secret']);
          if (usable.expiration) nextExpiry = Math.min(nextExpiry, Date.parse(usable.expiration));
        }
        const kept = Object.fromEntries(Object.entries(data).filter(([k]) => !k.startsWith(JWS_PREFIX)));
        const want = { ...kept, ...signatures };
        const same = Object.keys(want).length === Object.keys(data).length && Object.entries(want).every(([k, v]) => data[k] === v);
        if (!same) {
          cm = { ...cm, data: want };
          await objects.update('configmaps', PUBLIC_NAMESPACE, cm);
        }
        // An expiring token's signature must go when it expires.
        if (nextExpiry !== Infinity) return Math.max(nextExpiry - t.getTime() + 10, 10);
      },
    },
    env.cache,
    env.log,
  );
}
