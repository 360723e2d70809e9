// internal/validation/object-meta owns the rules for `metadata` common to every kind (spec §2.3):
// name syntax per resource (DNS-1123 subdomain by default, upstream's choice where it differs),
// generateName prefixes, namespace required/forbidden by scope, label and annotation syntax and
// size, finalizer names, ownerReferences and managedFields shape, and the update rules (immutable
// identity fields, no new finalizers once deletion started). Pure functions: nothing is mutated.
// Imports: apierrors (FieldError), naming (Naming type), schema (ResourceInfo type), name-rules,
// plain-json.

import { fieldErrors, fieldPath, type FieldError } from '../apierrors/field-errors.js';
import type { Naming } from '../naming/naming.js';
import type { ResourceInfo } from '../schema/catalog.js';
import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isLabelValue,
  isPathSegmentName,
  isPathSegmentPrefix,
  isQualifiedName,
  isValidIP,
  maskTrailingDash,
} from './name-rules.js';
import { isAbsent, isObject, jsonEqual, str, type JsonObject } from './plain-json.js';

/** Checks a name (or, with isPrefix, a generateName prefix); returns upstream-style messages. */
export type NameValidator = (name: string, isPrefix: boolean) => string[];

export const dnsSubdomainName: NameValidator = (name, isPrefix) => isDNS1123Subdomain(isPrefix ? maskTrailingDash(name) : name);
export const dnsLabelName: NameValidator = (name, isPrefix) => isDNS1123Label(isPrefix ? maskTrailingDash(name) : name);
export const dns1035LabelName: NameValidator = (name, isPrefix) => isDNS1035Label(isPrefix ? maskTrailingDash(name) : name);
export const pathSegmentName: NameValidator = (name, isPrefix) => (isPrefix ? isPathSegmentPrefix(name) : isPathSegmentName(name));
const ipAddressName: NameValidator = (name, isPrefix) => (isPrefix ? isPathSegmentPrefix(name) : isValidIP(name));

/**
 * Upstream's per-resource name rules where they differ from the DNS-1123 subdomain default, keyed
 * by `<upstream group>/<resource>`. Path-segment names are the loosest rule the store can hold.
 */
const NAME_RULES: Record<string, NameValidator> = {
  '/namespaces': dnsLabelName,
  '/services': dns1035LabelName,
  // Core events skip metadata validation upstream entirely (legacy clients); keep them path-safe.
  '/events': pathSegmentName,
  'rbac.authorization.k8s.io/roles': pathSegmentName,
  'rbac.authorization.k8s.io/clusterroles': pathSegmentName,
  'rbac.authorization.k8s.io/rolebindings': pathSegmentName,
  'rbac.authorization.k8s.io/clusterrolebindings': pathSegmentName,
  // "We don't care what you call your certificate requests."
  'certificates.k8s.io/certificatesigningrequests': pathSegmentName,
  // `v1.` names the core group's APIService, which is not a DNS subdomain.
  'apiregistration.k8s.io/apiservices': pathSegmentName,
  'networking.k8s.io/ipaddresses': ipAddressName,
};

/** The name rule of a resource: upstream's `ValidateXName` choice, DNS-1123 subdomain by default. */
export function nameValidatorFor(resource: Pick<ResourceInfo, 'upstreamGroup' | 'resource'>): NameValidator {
  return NAME_RULES[`${resource.upstreamGroup}/${resource.resource}`] ?? dnsSubdomainName;
}

export interface MetaValidationContext {
  readonly resource: ResourceInfo;
  /** Decides the spelling of the namespace finalizer accepted as standard; upstream spelling when absent. */
  readonly naming?: Naming;
  /**
   * Custom resources: upstream only warns about unqualified, non-standard finalizer names there
   * (see finalizerWarnings); built-in kinds reject them.
   */
  readonly custom?: boolean;
}

export const ANNOTATIONS_SIZE_LIMIT = 256 * 1024;
export const FIELD_MANAGER_MAX_LENGTH = 128;
const SUBRESOURCE_MAX_LENGTH = 256;

export const FINALIZER_ORPHAN = 'orphan';
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

/** The finalizer names that need no domain prefix: the namespace finalizer, orphan, foregroundDeletion. */
export function standardFinalizerNames(naming?: Naming): ReadonlySet<string> {
  // Both spellings of the namespace finalizer are accepted so objects written under either
  // naming stay valid.
  // The CRD cleanup finalizer is the server's own, in the served spelling of its group.
  const crdCleanup = `customresourcecleanup.${naming ? naming.group('apiextensions.k8s.io') : 'apiextensions.k8s.io'}`;
  return new Set(['kubernetes', naming?.mode ?? 'kubernetes', FINALIZER_ORPHAN, FINALIZER_FOREGROUND, crdCleanup]);
}

const ROOT = 'metadata';
const at = (name: string): string => fieldPath.child(ROOT, name);

/** Labels: qualified-name keys and label values; errors at `path` with the key or value, as upstream. */
export function validateLabels(labels: unknown, path: string): FieldError[] {
  if (!isObject(labels)) return [];
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels)) {
    for (const m of isQualifiedName(k)) errs.push(fieldErrors.invalid(path, k, m));
    if (typeof v === 'string') for (const m of isLabelValue(v)) errs.push(fieldErrors.invalid(path, v, m));
    // Upstream's decoder refuses anything but a string here (a custom resource's or a patched
    // body's labels are not decoded into the Go type in this server): never store it.
    else if (v !== null) errs.push(fieldErrors.typeInvalid(`${path}.${k}`, v, 'must be a string'));
  }
  return errs;
}

/** Annotations: qualified-name keys (case-insensitive) and at most 256 KiB of keys plus values. */
export function validateAnnotations(annotations: unknown, path: string): FieldError[] {
  if (!isObject(annotations)) return [];
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(fieldErrors.invalid(path, k, m));
    total += Buffer.byteLength(k) + (typeof v === 'string' ? Buffer.byteLength(v) : 0);
    if (typeof v !== 'string' && v !== null) errs.push(fieldErrors.typeInvalid(`${path}.${k}`, v, 'must be a string'));
  }
  if (total > ANNOTATIONS_SIZE_LIMIT) errs.push(fieldErrors.tooLong(path, ANNOTATIONS_SIZE_LIMIT));
  return errs;
}

function versionOfApiVersion(apiVersion: string): string {
  const parts = apiVersion.split('/');
  if (parts.length === 1) return parts[0]!;
  if (parts.length === 2) return parts[1]!;
  return '';
}

export function validateOwnerReferences(refs: unknown, path: string): FieldError[] {
  if (!Array.isArray(refs)) return [];
  const errs: FieldError[] = [];
  let firstController = '';
  for (const ref of refs) {
    if (!isObject(ref)) continue;
    const str = (k: string): string => (typeof ref[k] === 'string' ? (ref[k] as string) : '');
    const apiVersion = str('apiVersion');
    const kind = str('kind');
    // Upstream reports these at the list path, without an index.
    if (versionOfApiVersion(apiVersion) === '') errs.push(fieldErrors.invalid(fieldPath.child(path, 'apiVersion'), apiVersion, 'version must not be empty'));
    if (kind === '') errs.push(fieldErrors.invalid(fieldPath.child(path, 'kind'), kind, 'must not be empty'));
    if (str('name') === '') errs.push(fieldErrors.invalid(fieldPath.child(path, 'name'), str('name'), 'must not be empty'));
    if (str('uid') === '') errs.push(fieldErrors.invalid(fieldPath.child(path, 'uid'), str('uid'), 'must not be empty'));
    if (apiVersion === 'v1' && kind === 'Event') errs.push(fieldErrors.invalid(path, ref, '/v1, Kind=Event is disallowed from being an owner'));
    if (ref.controller === true) {
      const current = `${kind}/${str('name')}`;
      if (firstController) {
        errs.push(
          fieldErrors.invalid(
            path,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  }
  return errs;
}

/**
 * Finalizers: qualified names, never both orphan and foregroundDeletion; for built-in kinds an
 * unprefixed name must be a standard one.
 */
export function validateFinalizers(finalizers: unknown, path: string, opts: { naming?: Naming; custom?: boolean } = {}): FieldError[] {
  if (!Array.isArray(finalizers)) return [];
  const errs: FieldError[] = [];
  const standard = standardFinalizerNames(opts.naming);
  let orphan = false;
  let foreground = false;
  finalizers.forEach((f, i) => {
    if (typeof f !== 'string') return;
    for (const m of isQualifiedName(f)) errs.push(fieldErrors.invalid(path, f, m));
    if (f === FINALIZER_ORPHAN) orphan = true;
    if (f === FINALIZER_FOREGROUND) foreground = true;
    if (!opts.custom && !f.includes('/') && !standard.has(f)) {
      errs.push(fieldErrors.invalid(fieldPath.index(path, i), f, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  if (orphan && foreground) {
    errs.push(fieldErrors.invalid(path, finalizers, `finalizer ${FINALIZER_ORPHAN} and ${FINALIZER_FOREGROUND} cannot be both set`));
  }
  return errs;
}

/** Warnings upstream gives custom resources for finalizer names it would reject on built-in kinds. */
export function finalizerWarnings(meta: unknown, naming?: Naming): string[] {
  const finalizers = isObject(meta) && Array.isArray(meta.finalizers) ? meta.finalizers : [];
  const standard = standardFinalizerNames(naming);
  const out: string[] = [];
  finalizers.forEach((f, i) => {
    if (typeof f !== 'string' || f.includes('/') || standard.has(f)) return;
    out.push(`metadata.finalizers[${i}]: "${f}": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers`);
  });
  return out;
}

/** A manager name: at most 128 printable characters. */
export function validateFieldManager(manager: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (manager.length > FIELD_MANAGER_MAX_LENGTH) errs.push(fieldErrors.tooLong(path, FIELD_MANAGER_MAX_LENGTH));
  // Printable ASCII is the common case: no per-character Unicode test then.
  if (PRINTABLE_ASCII.test(manager)) return errs;
  let i = 0;
  for (const ch of manager) {
    if (!isPrintable(ch)) {
      const code = ch.codePointAt(0)!;
      errs.push(fieldErrors.invalid(path, manager, `invalid character U+${code.toString(16).toUpperCase().padStart(4, '0')} (at position ${i})`));
    }
    i += Buffer.byteLength(ch);
  }
  return errs;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

// Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const isPrintable = (ch: string): boolean => ch === ' ' || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch);

export function validateManagedFields(entries: unknown, path: string): FieldError[] {
  if (!Array.isArray(entries)) return [];
  const errs: FieldError[] = [];
  entries.forEach((e, i) => {
    if (!isObject(e)) return;
    const p = fieldPath.index(path, i);
    if (e.operation !== 'Apply' && e.operation !== 'Update') {
      errs.push(fieldErrors.invalid(fieldPath.child(p, 'operation'), e.operation ?? '', 'must be `Apply` or `Update`'));
    }
    if (typeof e.fieldsType === 'string' && e.fieldsType !== '' && e.fieldsType !== 'FieldsV1') {
      errs.push(fieldErrors.invalid(fieldPath.child(p, 'fieldsType'), e.fieldsType, 'must be `FieldsV1`'));
    }
    if (typeof e.manager === 'string') errs.push(...validateFieldManager(e.manager, fieldPath.child(p, 'manager')));
    if (typeof e.subresource === 'string' && e.subresource.length > SUBRESOURCE_MAX_LENGTH) {
      errs.push(fieldErrors.tooLong(fieldPath.child(p, 'subresource'), SUBRESOURCE_MAX_LENGTH));
    }
  });
  return errs;
}

/** The rules shared by create and update (labels, annotations, owners, finalizers, managed fields). */
function validateCommon(meta: JsonObject, ctx: MetaValidationContext): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...validateLabels(meta.labels, at('labels')));
  errs.push(...validateAnnotations(meta.annotations, at('annotations')));
  errs.push(...validateOwnerReferences(meta.ownerReferences, at('ownerReferences')));
  errs.push(...validateFinalizers(meta.finalizers, at('finalizers'), { naming: ctx.naming, custom: ctx.custom }));
  errs.push(...validateManagedFields(meta.managedFields, at('managedFields')));
  return errs;
}

/**
 * Metadata of an object about to be created. Expects name generation to have happened already
 * (an empty name is an error even with generateName set, as upstream: the registry fills the name
 * from generateName before validating); generateName itself is still checked as a prefix.
 */
export function validateObjectMetaCreate(meta: unknown, ctx: MetaValidationContext): FieldError[] {
  if (!isObject(meta)) return [fieldErrors.required(ROOT, '')];
  const errs: FieldError[] = [];
  const nameOk = nameValidatorFor(ctx.resource);
  const generateName = str(meta, 'generateName');
  if (generateName) for (const m of nameOk(generateName, true)) errs.push(fieldErrors.invalid(at('generateName'), generateName, m));
  const name = str(meta, 'name');
  if (!name) errs.push(fieldErrors.required(at('name'), 'name or generateName is required'));
  else for (const m of nameOk(name, false)) errs.push(fieldErrors.invalid(at('name'), name, m));

  const namespace = str(meta, 'namespace');
  if (ctx.resource.namespaced) {
    if (!namespace) errs.push(fieldErrors.required(at('namespace'), ''));
    else for (const m of isDNS1123Label(namespace)) errs.push(fieldErrors.invalid(at('namespace'), namespace, m));
  } else if (namespace) {
    errs.push(fieldErrors.forbidden(at('namespace'), 'not allowed on this type'));
  }
  if (typeof meta.generation === 'number' && meta.generation < 0) {
    errs.push(fieldErrors.invalid(at('generation'), meta.generation, 'must be greater than or equal to 0'));
  }
  errs.push(...validateCommon(meta, ctx));
  return errs;
}

const timeEqual = (a: unknown, b: unknown): boolean => {
  if (isAbsent(a) || isAbsent(b) || a === '' || b === '') return (isAbsent(a) || a === '') && (isAbsent(b) || b === '');
  if (a === b) return true;
  // Upstream compares instants at second precision, not spellings.
  const ta = typeof a === 'string' ? Date.parse(a) : NaN;
  const tb = typeof b === 'string' ? Date.parse(b) : NaN;
  return !Number.isNaN(ta) && Math.floor(ta / 1000) === Math.floor(tb / 1000);
};

/**
 * Metadata of an update (`newMeta` replacing `oldMeta`): name, namespace, uid, creationTimestamp,
 * deletionTimestamp and deletionGracePeriodSeconds are immutable; generation never decreases;
 * no finalizer may be added once deletionTimestamp is set. The registry must not route its own
 * deletion writes (which set deletionTimestamp) through this check. Unlike upstream, an empty
 * resourceVersion is not reported here: the registry decides between unconditional updates and 409s.
 */
export function validateObjectMetaUpdate(newMeta: unknown, oldMeta: unknown, ctx: MetaValidationContext): FieldError[] {
  if (!isObject(newMeta)) return [fieldErrors.required(ROOT, '')];
  const old = isObject(oldMeta) ? oldMeta : {};
  const errs: FieldError[] = [];

  if (!isAbsent(old.deletionTimestamp)) {
    const before = new Set(Array.isArray(old.finalizers) ? old.finalizers : []);
    const added = [...new Set(Array.isArray(newMeta.finalizers) ? newMeta.finalizers : [])].filter((f) => !before.has(f)).sort();
    if (added.length > 0) {
      errs.push(
        fieldErrors.forbidden(
          at('finalizers'),
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
        ),
      );
    }
  }
  const newGen = typeof newMeta.generation === 'number' ? newMeta.generation : 0;
  const oldGen = typeof old.generation === 'number' ? old.generation : 0;
  if (newGen < oldGen) errs.push(fieldErrors.invalid(at('generation'), newGen, 'must not be decremented'));

  for (const key of ['name', 'namespace', 'uid'] as const) {
    if (str(newMeta, key) !== str(old, key)) errs.push(fieldErrors.invalid(at(key), str(newMeta, key), 'field is immutable'));
  }
  for (const key of ['creationTimestamp', 'deletionTimestamp'] as const) {
    if (!timeEqual(newMeta[key], old[key])) errs.push(fieldErrors.invalid(at(key), newMeta[key] ?? null, 'field is immutable'));
  }
  if (!jsonEqual(newMeta.deletionGracePeriodSeconds, old.deletionGracePeriodSeconds)) {
    errs.push(fieldErrors.invalid(at('deletionGracePeriodSeconds'), newMeta.deletionGracePeriodSeconds ?? null, 'field is immutable'));
  }
  errs.push(...validateCommon(newMeta, ctx));
  return errs;
}
