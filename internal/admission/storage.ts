// internal/admission/storage owns upstream's two storage admission plugins:
//   - DefaultStorageClass: a PersistentVolumeClaim created without spec.storageClassName (and
//     without the beta storage-class annotation) gets the default StorageClass, the one annotated
//     `storageclass.<label domain>/is-default-class: "true"` (or its beta spelling); with several
//     the newest wins, ties broken by name, as 1.32. An explicit "" (no class) stays.
//   - StorageObjectInUseProtection: new PersistentVolumeClaims get the `<label domain>/pvc-protection`
//     finalizer and new PersistentVolumes `<label domain>/pv-protection`; the protection
//     controllers (controllers/storage-protection) remove them once the object is not in use.
// Both act at create in the mutating phase. Imports: admission, naming.

import type { Naming } from '../naming/naming.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject } from './admission.js';

export interface StorageClassInfo {
  name: string;
  creationTimestamp: string;
  annotations: Readonly<Record<string, string>>;
}

const isCore = (req: AdmissionRequest, resource: string) => req.resource.upstreamGroup === '' && req.resource.resource === resource && !req.subresource;

/** The default class among `classes`: annotated as default, newest first, then by name. */
export function defaultStorageClass(naming: Naming, classes: readonly StorageClassInfo[]): StorageClassInfo | undefined {
  const keys = [`${naming.labelPrefix('storageclass')}is-default-class`, `${naming.labelPrefix('storageclass.beta')}is-default-class`];
  const defaults = classes.filter((c) => keys.some((k) => c.annotations[k] === 'true'));
  defaults.sort((a, b) => {
    const ta = Date.parse(a.creationTimestamp) || 0;
    const tb = Date.parse(b.creationTimestamp) || 0;
    if (ta !== tb) return tb - ta;
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
  return defaults[0];
}

export function defaultStorageClassPlugin(naming: Naming, classes: () => StorageClassInfo[]): AdmissionPlugin {
  const betaAnnotation = `${naming.labelPrefix('volume.beta')}storage-class`;
  return {
    name: 'DefaultStorageClass',
    handles: (op) => op === 'CREATE',
    admit(req: AdmissionRequest): void {
      if (!isCore(req, 'persistentvolumeclaims') || !req.object) return;
      const spec = (req.object.spec ??= {}) as JsonObject;
      const annotations = ((req.object.metadata as JsonObject | undefined)?.annotations ?? {}) as Record<string, string>;
      if ((spec.storageClassName !== undefined && spec.storageClassName !== null) || betaAnnotation in annotations) return;
      const d = defaultStorageClass(naming, classes());
      if (d) spec.storageClassName = d.name;
    },
  };
}

export const pvcProtectionFinalizer = (naming: Naming): string => naming.label('pvc-protection');
export const pvProtectionFinalizer = (naming: Naming): string => naming.label('pv-protection');

export function storageObjectInUseProtection(naming: Naming): AdmissionPlugin {
  const finalizers: Record<string, string> = { persistentvolumeclaims: pvcProtectionFinalizer(naming), persistentvolumes: pvProtectionFinalizer(naming) };
  return {
    name: 'StorageObjectInUseProtection',
    handles: (op) => op === 'CREATE',
    admit(req: AdmissionRequest): void {
      const finalizer = finalizers[req.resource.resource];
      if (!finalizer || !isCore(req, req.resource.resource) || !req.object) return;
      const meta = (req.object.metadata ??= {}) as JsonObject;
      const current = Array.isArray(meta.finalizers) ? (meta.finalizers as string[]) : [];
      if (!current.includes(finalizer)) meta.finalizers = [...current, finalizer];
    },
  };
}
