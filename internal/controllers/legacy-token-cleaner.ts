// internal/controllers/legacy-token-cleaner owns upstream's legacy-serviceaccount-token-cleaner
// (on by default since 1.30) and the tracking record it relies on:
//   - at start the API server records in kube-system's ConfigMap
//     `kube-apiserver-legacy-service-account-token-tracking` (key `since`, a date) the day it began
//     marking secret-based tokens with `<domain>/legacy-token-last-used` when used;
//   - once tracking is older than --legacy-service-account-token-clean-up-period, every sync
//     (daily) takes each auto-generated token secret (its ServiceAccount lists it in `secrets`)
//     that is older than the period, not mounted by any pod and not used within the period:
//     without `<domain>/legacy-token-invalid-since` it gets that label (today) — the token stops
//     authenticating; labelled longer than the period ago it is deleted (resourceVersion
//     precondition). Removing the label makes the token valid again.
// Leader-only; reads from the watch cache, writes through the registries.
// Imports: auth/node references (pod secrets), naming, registry, watchcache, reconciler, service
// account controllers (objects, names).

import { podReferences } from '../authz/node/references.js';
import { resourcePrefix } from '../registry/keys.js';
import { Reconciler } from './reconciler.js';
import { CoreObjects, serviceAccountTokenSecretType, type ControllerEnv } from './serviceaccount-controllers.js';

export const TRACKING_CONFIGMAP = 'kube-apiserver-legacy-service-account-token-tracking';
const SYSTEM_NAMESPACE = 'kube-system';
const DAY_MS = 24 * 3600_000;

type Obj = Record<string, unknown>;
type Meta = { name?: string; namespace?: string; uid?: string; resourceVersion?: string; creationTimestamp?: string; deletionTimestamp?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
const metaOf = (o: Obj): Meta => (o.metadata ?? {}) as Meta;
const day = (t: Date): string => t.toISOString().slice(0, 10);
const isDay = (s: string | undefined): s is string => s !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s));

/** The tracking record, written once (an existing one keeps its date). */
export async function ensureTokenTracking(env: ControllerEnv, now: Date): Promise<void> {
  const objects = new CoreObjects(env, 'kube-apiserver');
  if (objects.get('configmaps', SYSTEM_NAMESPACE, TRACKING_CONFIGMAP)) return;
  await objects.create('configmaps', SYSTEM_NAMESPACE, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: TRACKING_CONFIGMAP, namespace: SYSTEM_NAMESPACE }, data: { since: day(now) } });
}

export interface LegacyTokenCleanerOptions {
  cleanUpPeriodMs: number;
  /** How often the secrets are looked at (upstream: daily). */
  syncIntervalMs?: number;
  now?: () => Date;
}

export function legacyTokenCleaner(env: ControllerEnv, o: LegacyTokenCleanerOptions): Reconciler {
  const objects = new CoreObjects(env, 'legacy-serviceaccount-token-cleaner');
  const now = o.now ?? (() => new Date());
  const syncMs = o.syncIntervalMs ?? DAY_MS;
  const d = env.naming.labelDomain;
  const lastUsedLabel = `${d}/legacy-token-last-used`;
  const invalidSinceLabel = `${d}/legacy-token-invalid-since`;
  const nameAnnotation = `${d}/service-account.name`;
  const uidAnnotation = `${d}/service-account.uid`;
  const tokenType = serviceAccountTokenSecretType(env.naming);
  const secretsPrefix = resourcePrefix(objects.resource('secrets'));

  async function sweep(): Promise<void> {
    const t = now();
    const tracking = objects.get('configmaps', SYSTEM_NAMESPACE, TRACKING_CONFIGMAP);
    const since = (tracking?.data as Record<string, string> | undefined)?.since;
    // Tracking starts at the end of its first day; a token unlabelled before then may have been used.
    if (!isDay(since) || t.getTime() < Date.parse(since) + DAY_MS + o.cleanUpPeriodMs) return;
    const keepCreatedAfter = t.getTime() - o.cleanUpPeriodMs;
    const keepUsedOnOrAfter = day(new Date(keepCreatedAfter));
    const mounted = new Map<string, Set<string>>();
    const mountedIn = (ns: string): Set<string> => {
      let set = mounted.get(ns);
      if (!set) mounted.set(ns, (set = new Set(objects.list('pods', ns).flatMap((p) => podReferences(p).secrets))));
      return set;
    };
    const secrets = env.cache.resource(secretsPrefix).list({}).entries.filter((e) => !e.corrupt).map((e) => JSON.parse(e.bytes.toString('utf8')) as Obj);
    for (const secret of secrets) {
      const m = metaOf(secret);
      if (secret.type !== tokenType || m.deletionTimestamp || !m.creationTimestamp || Date.parse(m.creationTimestamp) >= keepCreatedAfter) continue;
      const lastUsed = m.labels?.[lastUsedLabel];
      if (lastUsed !== undefined && (!isDay(lastUsed) || lastUsed >= keepUsedOnOrAfter)) continue;
      const ns = m.namespace ?? '';
      const sa = objects.get('serviceaccounts', ns, m.annotations?.[nameAnnotation] ?? '');
      const saUid = m.annotations?.[uidAnnotation];
      // Only tokens the token controller made for an account that lists them.
      if (!sa || (saUid && metaOf(sa).uid !== saUid)) continue;
      if (!((sa.secrets as Array<{ name?: string }> | undefined) ?? []).some((s) => s.name === m.name)) continue;
      if (mountedIn(ns).has(m.name ?? '')) continue;
      const invalidSince = m.labels?.[invalidSinceLabel];
      if (!isDay(invalidSince)) {
        env.log.info('marking an unused legacy service account token invalid', { secret: `${ns}/${m.name}` });
        await objects.update('secrets', ns, { ...secret, metadata: { ...m, labels: { ...(m.labels ?? {}), [invalidSinceLabel]: day(t) } } });
        continue;
      }
      if (invalidSince >= keepUsedOnOrAfter) continue;
      env.log.info('deleting a legacy service account token invalid for the clean-up period', { secret: `${ns}/${m.name}`, invalidSince });
      await objects.delete('secrets', ns, m.name ?? '', m.uid ?? '');
    }
  }

  return new Reconciler(
    {
      name: 'legacy-serviceaccount-token-cleaner',
      // The tracking record's events start the loop (the first at start); then it looks again
      // every sync interval, as upstream's wait.Until does.
      sources: [{ prefix: resourcePrefix(objects.resource('configmaps')), keys: (_t, e) => (e.namespace === SYSTEM_NAMESPACE && e.name === TRACKING_CONFIGMAP ? ['sweep'] : []) }],
      async reconcile() {
        await sweep();
        return syncMs;
      },
    },
    env.cache,
    env.log,
  );
}
