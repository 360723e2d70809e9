// internal/selectors/field-sets owns which fields each kind can be selected by, and their values:
// upstream's per-kind field-label conversion functions (which names a request may use, renames
// such as `spec.host` → `spec.nodeName`, and the error text for anything else) and the
// `ToSelectableFields` functions (the field set of one object). Kinds without a conversion
// function accept only `metadata.name` and `metadata.namespace`, as upstream's default does.
// Imports: field-selector, apierrors, patch/json-value (copyMembers).

import { errors } from '../apierrors/status.js';
import { copyMembers } from '../patch/json-value.js';
import { FieldSelector, type FieldSet, parseFieldSelector } from './field-selector.js';

/** What this module needs to know about a served resource; the catalog's ResourceInfo fits. */
export interface FieldSelectableResource {
  /** Served group name, used in messages. */
  readonly group: string;
  /** Group name in the schema data (upstream spelling); '' for the core group. */
  readonly upstreamGroup: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /**
   * Set for custom resources. `selectableFields` are the JSON paths (`.spec.color`) this version
   * declares in its CRD; `storedSelectableFields` is the union over all of the definition's
   * versions, which the stored field set carries so that every served version can match.
   */
  readonly custom?: { readonly selectableFields?: readonly string[]; readonly storedSelectableFields?: readonly string[] };
}

type Obj = Record<string, unknown>;

/** A string-valued field at `path`, `''` when absent or not a string. */
function str(obj: unknown, ...path: string[]): string {
  let cur: unknown = obj;
  for (const p of path) {
    if (typeof cur !== 'object' || cur === null) return '';
    cur = (cur as Obj)[p];
  }
  return typeof cur === 'string' ? cur : '';
}

/** An integer field rendered as Go's strconv.Itoa would, `0` when absent. */
function int(obj: unknown, ...path: string[]): string {
  let cur: unknown = obj;
  for (const p of path) {
    if (typeof cur !== 'object' || cur === null) return '0';
    cur = (cur as Obj)[p];
  }
  return typeof cur === 'number' && Number.isFinite(cur) ? String(Math.trunc(cur)) : '0';
}

function bool(obj: unknown, ...path: string[]): string {
  let cur: unknown = obj;
  for (const p of path) {
    if (typeof cur !== 'object' || cur === null) return 'false';
    cur = (cur as Obj)[p];
  }
  return cur === true ? 'true' : 'false';
}

interface KindFields {
  /** Selector name a request may use → the field-set name it is matched against. */
  readonly labels: Readonly<Record<string, string>>;
  /** The rejection message for `label`, as this kind's upstream conversion function words it. */
  readonly unsupported: (label: string, r: FieldSelectableResource) => string;
  /** Kind-specific fields of one object (metadata.* are added by fieldsetFor). */
  readonly fields: (obj: unknown) => Record<string, string>;
}

const identity = (...names: string[]): Record<string, string> => Object.fromEntries(names.map((n) => [n, n]));
const notSupported = (label: string): string => `field label not supported: ${label}`;

function eventFields(obj: unknown): Record<string, string> {
  // Core events name the subject `involvedObject`; events.k8s.io names it `regarding`. Both
  // versions are matched by the core names, as upstream stores one internal kind for both.
  // (Stored events are in the core shape; the events.k8s.io names are read for callers that
  // hand over an object as that API serves it.) Upstream's `source` falls back to the
  // reporting controller, which core JSON calls reportingComponent.
  const o = (obj ?? {}) as Obj;
  const subject = o.involvedObject ?? o.regarding;
  const reporting = str(o, 'reportingComponent') || str(o, 'reportingController');
  const source = str(o, 'source', 'component') || str(o, 'deprecatedSource', 'component') || reporting;
  return {
    'involvedObject.kind': str(subject, 'kind'),
    'involvedObject.namespace': str(subject, 'namespace'),
    'involvedObject.name': str(subject, 'name'),
    'involvedObject.uid': str(subject, 'uid'),
    'involvedObject.apiVersion': str(subject, 'apiVersion'),
    'involvedObject.resourceVersion': str(subject, 'resourceVersion'),
    'involvedObject.fieldPath': str(subject, 'fieldPath'),
    reason: str(o, 'reason'),
    reportingComponent: reporting,
    source,
    type: str(o, 'type'),
  };
}

const EVENT_LABELS = identity(
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'involvedObject.apiVersion',
  'involvedObject.resourceVersion',
  'involvedObject.fieldPath',
  'reason',
  'reportingComponent',
  'source',
  'type',
  'metadata.namespace',
  'metadata.name',
);

/** Keyed by `<upstream group>/<resource>`. */
const KINDS: Readonly<Record<string, KindFields>> = {
  '/pods': {
    labels: {
      ...identity(
        'metadata.name',
        'metadata.namespace',
        'spec.nodeName',
        'spec.restartPolicy',
        'spec.schedulerName',
        'spec.serviceAccountName',
        'spec.hostNetwork',
        'status.phase',
        'status.podIP',
        // Accepted but absent from the field set upstream, so it only ever equals ''.
        'status.podIPs',
        'status.nominatedNodeName',
      ),
      // Old clients send spec.host.
      'spec.host': 'spec.nodeName',
    },
    unsupported: notSupported,
    fields: (pod) => {
      const ips = (pod as Obj | undefined)?.status as Obj | undefined;
      const first = Array.isArray(ips?.podIPs) ? (ips!.podIPs as unknown[])[0] : undefined;
      return {
        'spec.nodeName': str(pod, 'spec', 'nodeName'),
        'spec.restartPolicy': str(pod, 'spec', 'restartPolicy'),
        'spec.schedulerName': str(pod, 'spec', 'schedulerName'),
        'spec.serviceAccountName': str(pod, 'spec', 'serviceAccountName'),
        'spec.hostNetwork': bool(pod, 'spec', 'hostNetwork'),
        'status.phase': str(pod, 'status', 'phase'),
        // The first of podIPs is the primary IP; objects written with only podIP convert to
        // podIPs: [podIP] upstream.
        'status.podIP': first !== undefined ? str(first, 'ip') : str(pod, 'status', 'podIP'),
        'status.nominatedNodeName': str(pod, 'status', 'nominatedNodeName'),
      };
    },
  },
  '/nodes': {
    labels: identity('metadata.name', 'spec.unschedulable'),
    unsupported: notSupported,
    fields: (node) => ({ 'spec.unschedulable': bool(node, 'spec', 'unschedulable') }),
  },
  '/replicationcontrollers': {
    labels: identity('metadata.name', 'metadata.namespace', 'status.replicas'),
    unsupported: notSupported,
    fields: (rc) => ({ 'status.replicas': int(rc, 'status', 'replicas') }),
  },
  '/events': { labels: EVENT_LABELS, unsupported: notSupported, fields: eventFields },
  '/namespaces': {
    labels: identity('status.phase', 'metadata.name'),
    unsupported: notSupported,
    fields: (ns) => ({ 'status.phase': str(ns, 'status', 'phase') }),
  },
  '/secrets': {
    labels: identity('type', 'metadata.namespace', 'metadata.name'),
    unsupported: notSupported,
    fields: (secret) => ({ type: str(secret, 'type') }),
  },
  '/services': {
    labels: identity('metadata.namespace', 'metadata.name', 'spec.clusterIP', 'spec.type'),
    unsupported: notSupported,
    fields: (svc) => ({ 'spec.clusterIP': str(svc, 'spec', 'clusterIP'), 'spec.type': str(svc, 'spec', 'type') }),
  },
  'batch/jobs': {
    labels: identity('metadata.name', 'metadata.namespace', 'status.successful'),
    unsupported: (label) => `field label ${JSON.stringify(label)} not supported for batchv1.Job`,
    fields: (job) => ({ 'status.successful': int(job, 'status', 'succeeded') }),
  },
  'certificates.k8s.io/certificatesigningrequests': {
    labels: identity('metadata.name', 'spec.signerName'),
    unsupported: notSupported,
    fields: (csr) => ({ 'spec.signerName': str(csr, 'spec', 'signerName') }),
  },
  'certificates.k8s.io/clustertrustbundles': {
    labels: identity('metadata.name', 'spec.signerName'),
    unsupported: notSupported,
    fields: (ctb) => ({ 'spec.signerName': str(ctb, 'spec', 'signerName') }),
  },
  'certificates.k8s.io/podcertificaterequests': {
    labels: identity('metadata.name', 'spec.signerName', 'spec.podName', 'spec.nodeName'),
    unsupported: notSupported,
    fields: (pcr) => ({
      'spec.signerName': str(pcr, 'spec', 'signerName'),
      'spec.podName': str(pcr, 'spec', 'podName'),
      'spec.nodeName': str(pcr, 'spec', 'nodeName'),
    }),
  },
  'events.k8s.io/events': {
    labels: {
      reason: 'reason',
      'regarding.kind': 'involvedObject.kind',
      'regarding.namespace': 'involvedObject.namespace',
      'regarding.name': 'involvedObject.name',
      'regarding.uid': 'involvedObject.uid',
      'regarding.apiVersion': 'involvedObject.apiVersion',
      'regarding.resourceVersion': 'involvedObject.resourceVersion',
      'regarding.fieldPath': 'involvedObject.fieldPath',
      reportingController: 'reportingComponent',
      source: 'source',
      type: 'type',
      'metadata.namespace': 'metadata.namespace',
      'metadata.name': 'metadata.name',
    },
    unsupported: notSupported,
    fields: eventFields,
  },
  'resource.k8s.io/resourceslices': {
    labels: identity('metadata.name', 'spec.nodeName', 'spec.driver'),
    unsupported: (label, r) => `field label not supported for ${r.group}/${r.version}, Kind=ResourceSlice: ${label}`,
    fields: (slice) => ({ 'spec.nodeName': str(slice, 'spec', 'nodeName'), 'spec.driver': str(slice, 'spec', 'driver') }),
  },
};

const DEFAULT_KIND: KindFields = {
  labels: identity('metadata.name', 'metadata.namespace'),
  unsupported: (label) => `${JSON.stringify(label)} is not a known field selector: only "metadata.name", "metadata.namespace"`,
  fields: () => ({}),
};

/** A selectable field's name: its JSON path without the leading dot (`.spec.color` → `spec.color`). */
export const selectableFieldName = (jsonPath: string): string => (jsonPath.startsWith('.') ? jsonPath.slice(1) : jsonPath);

/**
 * The value a CRD selectable field has in one object, as upstream renders it with fmt.Sprint:
 * strings as they are, integers in decimal, booleans as true/false, absent or null as ''.
 * Paths are simple: `.a.b` segments and `['a.b']` brackets (the CRD validation allows no more).
 */
export function customFieldValue(obj: unknown, jsonPath: string): string {
  let cur: unknown = obj;
  for (const m of jsonPath.matchAll(/\.([^.[\]]+)|\[\s*(?:'([^']*)'|"([^"]*)")\s*\]/g)) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) return '';
    const key = m[1] ?? m[2] ?? m[3] ?? '';
    cur = Object.prototype.hasOwnProperty.call(cur, key) ? (cur as Obj)[key] : undefined;
  }
  if (typeof cur === 'string') return cur;
  if (typeof cur === 'number' || typeof cur === 'boolean') return String(cur);
  return '';
}

/** Upstream's crConverter.ConvertFieldLabel and the custom resource strategy's field set. */
function customKind(r: FieldSelectableResource): KindFields {
  const own = (r.custom?.selectableFields ?? []).map(selectableFieldName);
  const stored = r.custom?.storedSelectableFields ?? r.custom?.selectableFields ?? [];
  return {
    labels: identity('metadata.name', ...(r.namespaced ? ['metadata.namespace'] : []), ...own),
    unsupported: notSupported,
    fields: (obj) => Object.fromEntries(stored.map((p) => [selectableFieldName(p), customFieldValue(obj, p)])),
  };
}

const kindFields = (r: FieldSelectableResource): KindFields =>
  r.custom ? customKind(r) : (KINDS[`${r.upstreamGroup}/${r.resource}`] ?? DEFAULT_KIND);

/** The selector names a request may use for this resource, sorted. */
export function selectableFields(resource: FieldSelectableResource): string[] {
  return Object.keys(kindFields(resource).labels).sort();
}

/**
 * Checks every field of `selector` against what the resource supports and rewrites the names to
 * the ones fieldsetFor produces. Throws a 400 BadRequest with the kind's upstream message for
 * the first unsupported field (upstream stops at the first too).
 */
export function validateFieldSelector(resource: FieldSelectableResource, selector: FieldSelector): FieldSelector {
  const spec = kindFields(resource);
  return selector.transform((field, value) => {
    const mapped = Object.prototype.hasOwnProperty.call(spec.labels, field) ? spec.labels[field] : undefined;
    if (mapped === undefined) throw errors.badRequest(spec.unsupported(field, resource));
    return { field: mapped, value };
  });
}

/** parseFieldSelector followed by validateFieldSelector: the one call list/watch handlers need. */
export function parseFieldSelectorFor(resource: FieldSelectableResource, text: string): FieldSelector {
  return validateFieldSelector(resource, parseFieldSelector(text));
}

/**
 * The version of how fieldsetFor derives values. Field sets are stored beside objects (the
 * watch cache's attributes in store records) and trusted at start while the resource's field
 * names and this number are unchanged: raise it whenever a kind's field changes how its value
 * is computed from the object under the same name.
 */
export const FIELD_SETS_VERSION = 1;

/**
 * The field set of one object of this resource, in the names validateFieldSelector produces:
 * `metadata.name`, `metadata.namespace` for namespaced kinds, and the kind's own fields.
 * Tolerates any shape: missing fields read as upstream's zero values.
 */
export function fieldsetFor(resource: FieldSelectableResource, obj: unknown): FieldSet {
  const meta = (obj as Obj | undefined)?.metadata;
  // copyMembers, not `{ ...fields }`: the metadata members added next are ones the kind's set
  // lacks, which V8 takes a slow path for on a spread copy (per object and write).
  const set = copyMembers(kindFields(resource).fields(obj));
  set['metadata.name'] = str(meta, 'name');
  if (resource.namespaced) set['metadata.namespace'] = str(meta, 'namespace');
  return set;
}
