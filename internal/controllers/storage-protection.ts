// internal/controllers/storage-protection owns upstream's `pvc-protection` and `pv-protection`
// controllers (leader-only). A PersistentVolumeClaim keeps its `<label domain>/pvc-protection`
// finalizer while a pod that is not terminated (phase other than Succeeded or Failed) uses it
// (a persistentVolumeClaim volume naming it, or a generic ephemeral volume whose claim it is:
// `<pod>-<volume>`); once deleted and unused the finalizer is removed and the claim goes. A
// PersistentVolume keeps `<label domain>/pv-protection` while it is Bound. Both controllers
// also add the finalizer to live objects that lack it (created while the admission plugin was
// off), as upstream's do. Imports: admission/storage (finalizer names), controllers (objects,
// reconciler), storedobject (byte-pattern), watchcache (entry-object).

import { pvcProtectionFinalizer, pvProtectionFinalizer } from '../admission/storage.js';
import { BytePattern } from '../storedobject/byte-pattern.js';
import { decodedEntry } from '../watchcache/entry-object.js';
import type { CacheEntry } from '../watchcache/types.js';
import { Reconciler } from './reconciler.js';
import { metaOf, Objects, type Obj, type ResourceRef } from './objects.js';
import type { ControllerEnv } from './serviceaccount-controllers.js';

const PVCS: ResourceRef = ['', 'v1', 'persistentvolumeclaims'];
const PVS: ResourceRef = ['', 'v1', 'persistentvolumes'];
const PODS: ResourceRef = ['', 'v1', 'pods'];

const rec = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const finalizersOf = (o: Obj): string[] => (Array.isArray(rec(o.metadata).finalizers) ? (rec(o.metadata).finalizers as string[]) : []);

/** The claims a pod's volumes name, whatever its phase. */
export function claimsOf(pod: Obj): string[] {
  const volumes = Array.isArray(rec(pod.spec).volumes) ? (rec(pod.spec).volumes as unknown[]).map(rec) : [];
  const out: string[] = [];
  for (const v of volumes) {
    const claim = rec(v.persistentVolumeClaim).claimName;
    if (typeof claim === 'string') out.push(claim);
    else if (v.ephemeral != null) out.push(`${String(metaOf(pod).name)}-${String(v.name)}`);
  }
  return out;
}

/**
 * The members claimsOf reads, as JSON.stringify writes them (it never escapes a letter);
 * searched from their rarest byte (see byte-pattern), as every stored pod is at start.
 */
const CLAIM_MEMBERS = ['"persistentVolumeClaim":', '"ephemeral":'].map((m) => new BytePattern(m));
/** The member claimsOf reads them under: a claim member follows its first mention in the bytes. */
const VOLUMES_MEMBER = new BytePattern('"volumes":');

/**
 * False when the pod's bytes name no claim volume, so claimsOf would find none: most pods,
 * which then cost no parse (the controller reads every stored pod at start). The claim members
 * are looked for only after the first `"volumes":`: a pod without volumes costs one scan of its
 * bytes instead of two, one with volumes scans only what follows it (at start every stored pod
 * passes here; two whole scans were about 8 % of the start's CPU with 50,000 pods).
 */
export function mayUseClaims(entry: Pick<CacheEntry, 'bytes'>): boolean {
  const from = VOLUMES_MEMBER.indexIn(entry.bytes);
  return from >= 0 && CLAIM_MEMBERS.some((m) => m.indexIn(entry.bytes, from + VOLUMES_MEMBER.length) >= 0);
}

/** The claims a pod uses: none once it has terminated. */
export function claimsUsedBy(pod: Obj): string[] {
  const phase = rec(pod.status).phase;
  return phase === 'Succeeded' || phase === 'Failed' ? [] : claimsOf(pod);
}

/** Sets or clears `finalizer` on the object as read (a conflict is retried by the reconciler). */
async function setFinalizer(objects: Objects, ref: ResourceRef, obj: Obj, finalizer: string, wanted: boolean): Promise<void> {
  const current = finalizersOf(obj);
  if (current.includes(finalizer) === wanted) return;
  const finalizers = wanted ? [...current, finalizer] : current.filter((f) => f !== finalizer);
  await objects.update(ref, String(metaOf(obj).namespace ?? ''), { ...obj, metadata: { ...rec(obj.metadata), finalizers } });
}

export function pvcProtectionController(env: ControllerEnv): Reconciler {
  const objects = new Objects(env, 'pvc-protection-controller');
  const finalizer = pvcProtectionFinalizer(env.naming);
  return new Reconciler(
    {
      name: 'pvc-protection-controller',
      sources: [
        { prefix: objects.prefix(PVCS), keys: (t, e) => (t === 'DELETED' ? [] : [`${e.namespace}/${e.name}`]) },
        // A pod's end (or deletion) may free the claims it used.
        // The pod as the write's other consumers decoded it (shared, read-only).
        { prefix: objects.prefix(PODS), keys: (_t, e) => (mayUseClaims(e) ? claimsOf((decodedEntry(e) ?? {}) as Obj).map((c) => `${e.namespace}/${c}`) : []) },
      ],
      async reconcile(key) {
        const slash = key.indexOf('/');
        const namespace = key.slice(0, slash);
        const name = key.slice(slash + 1);
        const pvc = objects.get(PVCS, namespace, name);
        if (!pvc) return;
        if (!metaOf(pvc).deletionTimestamp) return setFinalizer(objects, PVCS, pvc, finalizer, true);
        if (!finalizersOf(pvc).includes(finalizer)) return;
        const used = objects.list(PODS, namespace).some((p) => claimsUsedBy(p).includes(name));
        if (!used) await setFinalizer(objects, PVCS, pvc, finalizer, false);
      },
    },
    env.cache,
    env.log,
  );
}

export function pvProtectionController(env: ControllerEnv): Reconciler {
  const objects = new Objects(env, 'pv-protection-controller');
  const finalizer = pvProtectionFinalizer(env.naming);
  return new Reconciler(
    {
      name: 'pv-protection-controller',
      sources: [{ prefix: objects.prefix(PVS), keys: (t, e) => (t === 'DELETED' ? [] : [e.name]) }],
      async reconcile(name) {
        const pv = objects.get(PVS, '', name);
        if (!pv) return;
        if (!metaOf(pv).deletionTimestamp) return setFinalizer(objects, PVS, pv, finalizer, true);
        if (rec(pv.status).phase !== 'Bound') await setFinalizer(objects, PVS, pv, finalizer, false);
      },
    },
    env.cache,
    env.log,
  );
}
