// internal/http/handlers/reviews owns the review kinds: SelfSubjectAccessReview,
// SubjectAccessReview, LocalSubjectAccessReview and SelfSubjectRulesReview (authorization
// group), SelfSubjectReview and TokenReview (authentication group). They are virtual resources
// (api-conventions §2.1): a POST to the collection is a question, answered in the response and
// never stored, so no name is needed and nothing gets a uid, resourceVersion or managedFields.
// This is upstream's create-only REST storage (pkg/registry/authorization/*/rest.go,
// pkg/registry/authentication/*/storage.go); the generic registry is not involved.
//
// Routing as upstream's installer: only POST on the collection path exists, so other methods
// there are 405 and any item or sub-resource path is 404 (as is the cluster-wide path of the
// namespaced LocalSubjectAccessReview). Success is 200, the project's answer to every create
// (api-conventions §4.4 item 5), where upstream answers 201. Admission is not run: none of the
// project's admission plugins apply to these kinds (namespace lifecycle exempts
// LocalSubjectAccessReview, as upstream does). `?dryRun=All` is validated and changes nothing,
// since nothing is stored either way.
//
// Access reviews are decided by the same authorizer chain requests are (HttpDeps.authorizers),
// with the raw tri-state: allow → allowed, deny → denied, no opinion → neither. Field and label
// selectors in resourceAttributes are validated as upstream, their parse problems reported in
// evaluationError as upstream words them, and what converts is passed to the authorizers as a
// request's selectors are (the Node authorizer and webhooks read them).
// Imports: apierrors, auth, authz, naming, schema, selectors, http.

import type { Context } from 'hono';
import { errors } from '../../apierrors/status.js';
import { fieldErrors, type FieldError } from '../../apierrors/field-errors.js';
import { authenticate, type Authenticator } from '../../auth/authenticator.js';
import type { UserInfo } from '../../auth/user.js';
import { decide, rulesFor, type Attributes, type Authorizer } from '../../authz/authorizer.js';
import type { Naming } from '../../naming/naming.js';
import type { ResourceInfo } from '../../schema/catalog.js';
import { labelKeyErrors, labelValueErrors, tryParseFieldSelector, tryParseLabelSelector } from '../../selectors/index.js';
import type { FieldRequirement } from '../../selectors/field-selector.js';
import type { LabelOperator, LabelRequirement } from '../../selectors/label-selector.js';
import type { Env } from '../context.js';
import type { HttpDeps } from '../deps.js';
import { chooseRepresentation, writeObject } from '../representations.js';
import { resolveResourceRequest } from './resource-request.js';
import { readWriteBody, type JsonObject } from './write-body.js';
import { requestChain } from '../filters/with-authorization.js';

export type ReviewKind =
  | 'SelfSubjectAccessReview'
  | 'SubjectAccessReview'
  | 'LocalSubjectAccessReview'
  | 'SelfSubjectRulesReview'
  | 'SelfSubjectReview'
  | 'TokenReview';

/** `<upstream group>/<resource>` → kind, for every version the catalog serves. */
const REVIEWS: Readonly<Record<string, ReviewKind>> = {
  'authorization.k8s.io/selfsubjectaccessreviews': 'SelfSubjectAccessReview',
  'authorization.k8s.io/subjectaccessreviews': 'SubjectAccessReview',
  'authorization.k8s.io/localsubjectaccessreviews': 'LocalSubjectAccessReview',
  'authorization.k8s.io/selfsubjectrulesreviews': 'SelfSubjectRulesReview',
  'authentication.k8s.io/selfsubjectreviews': 'SelfSubjectReview',
  'authentication.k8s.io/tokenreviews': 'TokenReview',
};

/** The review kind a served resource is, or undefined for every other resource. */
export function reviewKindOf(resource: ResourceInfo): ReviewKind | undefined {
  // A custom resource never is, whatever group it claims.
  if (resource.custom) return undefined;
  return REVIEWS[`${resource.upstreamGroup}/${resource.resource}`];
}

/** What answering a review needs besides the request body. */
export interface ReviewContext {
  /** The requester (after impersonation): the subject of self reviews. */
  user: UserInfo;
  /** The namespace of the URL ('' for cluster-scoped kinds). */
  namespace: string;
  authorizers: readonly Authorizer[];
  authenticators: readonly Authenticator[];
  naming: Naming;
  now(): Date;
}

// ---------------------------------------------------------------------------------------------
// Reading the decoded body. Its types were checked against the Go types while decoding
// (write-body's go-decode check for JSON and YAML; protobuf and CBOR carry types), so these
// only guard against absent values.

const isRecord = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const rec = (v: unknown): JsonObject | undefined => (isRecord(v) ? v : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);
/** A nested object the Go type holds by pointer: present unless absent or null. */
const present = (v: unknown): boolean => v !== undefined && v !== null;

/** Empty as apiequality.Semantic sees a zero ObjectMeta field: nil and empty maps and slices alike. */
function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isRecord(v)) return Object.keys(v).length === 0;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Messages quote values as Go's `%#v` prints them (field.Invalid of a struct); these cover the
// fields the review kinds can carry.

const goString = (s: string): string => JSON.stringify(s);
const goStrings = (v: unknown): string => (Array.isArray(v) ? `[]string{${strings(v).map(goString).join(', ')}}` : '[]string(nil)');
const goStringMap = (v: unknown): string => {
  const m = rec(v);
  if (!m) return 'map[string]string(nil)';
  const keys = Object.keys(m).sort();
  return `map[string]string{${keys.map((k) => `${goString(k)}:${goString(str(m[k]))}`).join(', ')}}`;
};

/** `authorization.NonResourceAttributes{Path:"/api", Verb:"get"}`, as upstream's message prints it. */
export function goNonResourceAttributes(v: unknown): string {
  const a = rec(v) ?? {};
  return `authorization.NonResourceAttributes{Path:${goString(str(a.path))}, Verb:${goString(str(a.verb))}}`;
}

/**
 * The request's ObjectMeta in Go syntax, for the `metadata: Invalid value: …: must be empty`
 * message. String, number, map, slice and time fields are printed as Go does (times as if the
 * server ran in UTC); owner references and managed fields, which no client puts in a review,
 * are printed as JSON after their Go type rather than field by field.
 */
export function goObjectMeta(v: unknown): string {
  const m = rec(v) ?? {};
  const s = (k: string): string => goString(str(m[k]));
  const ptr = (k: string, type: string): string => (present(m[k]) ? `(*${type})(${JSON.stringify(m[k])})` : `(*${type})(nil)`);
  // metav1.Time prints through time.Time's GoString; a decoded time is in time.Local.
  const time = (k: string): string => {
    const d = present(m[k]) ? new Date(String(m[k])) : undefined;
    if (!d || Number.isNaN(d.getTime())) return 'time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)';
    const month = d.toLocaleString('en-US', { month: 'long', timeZone: 'UTC' });
    return `time.Date(${d.getUTCFullYear()}, time.${month}, ${d.getUTCDate()}, ${d.getUTCHours()}, ${d.getUTCMinutes()}, ${d.getUTCSeconds()}, 0, time.Local)`;
  };
  const fields = [
    `Name:${s('name')}`,
    `GenerateName:${s('generateName')}`,
    `Namespace:${s('namespace')}`,
    `SelfLink:${s('selfLink')}`,
    `UID:${s('uid')}`,
    `ResourceVersion:${s('resourceVersion')}`,
    `Generation:${typeof m.generation === 'number' ? m.generation : 0}`,
    `CreationTimestamp:${time('creationTimestamp')}`,
    `DeletionTimestamp:${present(m.deletionTimestamp) ? time('deletionTimestamp') : '<nil>'}`,
    `DeletionGracePeriodSeconds:${ptr('deletionGracePeriodSeconds', 'int64')}`,
    `Labels:${goStringMap(m.labels)}`,
    `Annotations:${goStringMap(m.annotations)}`,
    `OwnerReferences:${Array.isArray(m.ownerReferences) ? `[]v1.OwnerReference${JSON.stringify(m.ownerReferences)}` : '[]v1.OwnerReference(nil)'}`,
    `Finalizers:${goStrings(m.finalizers)}`,
    // Upstream clears managedFields before comparing but prints the original.
    `ManagedFields:${Array.isArray(m.managedFields) ? `[]v1.ManagedFieldsEntry${JSON.stringify(m.managedFields)}` : '[]v1.ManagedFieldsEntry(nil)'}`,
  ];
  return `v1.ObjectMeta{${fields.join(', ')}}`;
}

/**
 * field.Invalid with a value already in Go syntax. field-errors would quote a string value, so
 * the Go text leads the detail instead: the message reads the same, `Invalid value: <go>: detail`.
 */
const invalidGo = (field: string, goText: string, detail: string): FieldError => ({ type: 'FieldValueInvalid', field, detail: `${goText}: ${detail}` });

// ---------------------------------------------------------------------------------------------
// Validation (pkg/apis/authorization/validation).

/** The metadata rule: empty (apart from managedFields, and for the local kind its namespace). */
function metadataErrors(meta: unknown, allowNamespace: boolean): FieldError[] {
  const m = rec(meta) ?? {};
  const nonEmpty = Object.entries(m).some(([k, v]) => k !== 'managedFields' && !(allowNamespace && k === 'namespace') && !isZero(v));
  if (!nonEmpty) return [];
  return [invalidGo('metadata', goObjectMeta(m), allowNamespace ? 'must be empty except for namespace' : 'must be empty')];
}

function selectorRequirementErrors(kind: 'field' | 'label', req: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const key = str(req.key);
  const values = strings(req.values);
  if (kind === 'field' && key === '') errs.push(fieldErrors.required(`${path}.key`, 'must be specified'));
  switch (req.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) errs.push(fieldErrors.required(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) errs.push(fieldErrors.forbidden(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    default:
      // AllowUnknownOperatorInRequirement: a newer client's operator is no error here; the
      // requirement is dropped (and said so in evaluationError) when the review is answered.
      break;
  }
  if (kind === 'label') {
    for (const msg of labelKeyErrors(key)) errs.push(fieldErrors.invalid(`${path}.key`, key, msg));
    values.forEach((v, i) => {
      for (const msg of labelValueErrors(v)) errs.push(fieldErrors.invalid(`${path}.values[${i}]`, v, msg));
    });
  }
  return errs;
}

function selectorErrors(kind: 'field' | 'label', selector: unknown, path: string): FieldError[] {
  if (!present(selector)) return [];
  const s = rec(selector) ?? {};
  const raw = str(s.rawSelector);
  const reqs = Array.isArray(s.requirements) ? s.requirements : [];
  const errs: FieldError[] = [];
  if (raw !== '' && reqs.length > 0) errs.push(fieldErrors.invalid(`${path}.rawSelector`, raw, 'may not specified at the same time as requirements'));
  if (raw === '' && reqs.length === 0) errs.push(fieldErrors.required(`${path}.requirements`, `when ${path} is specified, requirements or rawSelector is required`));
  reqs.forEach((r: unknown, i) => errs.push(...selectorRequirementErrors(kind, rec(r) ?? {}, `${path}.requirements[${i}]`)));
  return errs;
}

function resourceAttributesErrors(attrs: unknown): FieldError[] {
  if (!present(attrs)) return [];
  const a = rec(attrs) ?? {};
  // Upstream builds this path from the root whatever the spec's path: spec.resourceAttributes.
  return [
    ...selectorErrors('field', a.fieldSelector, 'spec.resourceAttributes.fieldSelector'),
    ...selectorErrors('label', a.labelSelector, 'spec.resourceAttributes.labelSelector'),
  ];
}

/** The spec rules shared by every access review: exactly one of the two attribute kinds. */
function attributesChoiceErrors(spec: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  const hasResource = present(spec.resourceAttributes);
  const hasNonResource = present(spec.nonResourceAttributes);
  if (hasResource && hasNonResource) {
    errs.push(invalidGo('spec.nonResourceAttributes', goNonResourceAttributes(spec.nonResourceAttributes), 'cannot be specified in combination with resourceAttributes'));
  }
  if (!hasResource && !hasNonResource) {
    // Upstream passes the (nil) nonResourceAttributes as the value, printed as "null".
    errs.push(fieldErrors.invalid('spec.resourceAttributes', 'null', 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  }
  return errs;
}

/** ValidateSelfSubjectAccessReview, ValidateSubjectAccessReview, ValidateLocalSubjectAccessReview. */
export function validateAccessReview(kind: 'SelfSubjectAccessReview' | 'SubjectAccessReview' | 'LocalSubjectAccessReview', obj: JsonObject): FieldError[] {
  const spec = rec(obj.spec) ?? {};
  const errs = attributesChoiceErrors(spec);
  if (kind !== 'SelfSubjectAccessReview' && str(spec.user) === '' && strings(spec.groups).length === 0) {
    errs.push(fieldErrors.invalid('spec.user', str(spec.user), 'at least one of user or group must be specified'));
  }
  errs.push(...resourceAttributesErrors(spec.resourceAttributes));
  errs.push(...metadataErrors(obj.metadata, kind === 'LocalSubjectAccessReview'));
  if (kind === 'LocalSubjectAccessReview') {
    const ns = str(rec(obj.metadata)?.namespace);
    const attrs = rec(spec.resourceAttributes);
    if (attrs && str(attrs.namespace) !== ns) {
      errs.push(fieldErrors.invalid('spec.resourceAttributes.namespace', str(attrs.namespace), 'must match metadata.namespace'));
    }
    if (present(spec.nonResourceAttributes)) {
      errs.push(invalidGo('spec.nonResourceAttributes', goNonResourceAttributes(spec.nonResourceAttributes), 'disallowed on this kind of request'));
    }
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Answering.

/**
 * What upstream's selector conversion (registry/authorization/util) could not use: a raw
 * selector that does not parse is ignored, requirements it cannot convert are dropped (the rest
 * still count). Returned as upstream's evaluationError sentences.
 */
export function selectorParseNotes(attrs: JsonObject): string[] {
  const notes: string[] = [];
  const note = (kind: 'field' | 'label', selector: unknown): void => {
    const s = rec(selector);
    if (!s) return;
    let kept = 0;
    let failed = false;
    const raw = str(s.rawSelector);
    if (raw !== '') {
      const parsed = kind === 'field' ? tryParseFieldSelector(raw) : tryParseLabelSelector(raw);
      if ('error' in parsed) failed = true;
    }
    const reqs = Array.isArray(s.requirements) ? s.requirements : [];
    if (reqs.length > 0) {
      kept = 0;
      failed = false;
      for (const r of reqs) {
        const req = rec(r) ?? {};
        const op = str(req.operator);
        const values = strings(req.values);
        // Label operators all convert; field selectors take In and NotIn with one value only.
        const usable = kind === 'label' ? ['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(op) : (op === 'In' || op === 'NotIn') && values.length === 1;
        if (usable) kept++;
        else failed = true;
      }
    }
    if (failed) notes.push(`spec.resourceAttributes.${kind}Selector ${kept > 0 ? 'partially ignored' : 'ignored'} due to parse error`);
  };
  note('field', attrs.fieldSelector);
  note('label', attrs.labelSelector);
  return notes;
}

const LABEL_OPERATORS: Readonly<Record<string, LabelOperator>> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * The review's selectors as the attributes carry a request's (upstream's AuthorizeWithSelectors):
 * `rawSelector` parsed, or the `requirements` converted (field selectors: In and NotIn with one
 * value; label selectors: every operator). What does not convert is left out, as
 * selectorParseNotes reports.
 */
function reviewSelectors(r: JsonObject): Pick<Attributes, 'fieldSelector' | 'labelSelector'> {
  const out: { fieldSelector?: FieldRequirement[]; labelSelector?: LabelRequirement[] } = {};
  const f = rec(r.fieldSelector);
  if (f) {
    const reqs = Array.isArray(f.requirements) ? f.requirements.map((x) => rec(x) ?? {}) : [];
    const parsed = reqs.length === 0 && str(f.rawSelector) ? tryParseFieldSelector(str(f.rawSelector)) : undefined;
    const list =
      parsed !== undefined
        ? 'selector' in parsed ? [...parsed.selector.requirements] : []
        : reqs.flatMap((q): FieldRequirement[] => {
            const values = strings(q.values);
            const op = str(q.operator);
            return (op === 'In' || op === 'NotIn') && values.length === 1 ? [{ field: str(q.key), operator: op === 'In' ? '=' : '!=', value: values[0]! }] : [];
          });
    if (list.length) out.fieldSelector = list;
  }
  const l = rec(r.labelSelector);
  if (l) {
    const reqs = Array.isArray(l.requirements) ? l.requirements.map((x) => rec(x) ?? {}) : [];
    const parsed = reqs.length === 0 && str(l.rawSelector) ? tryParseLabelSelector(str(l.rawSelector)) : undefined;
    const list =
      parsed !== undefined
        ? 'selector' in parsed ? [...parsed.selector.requirements] : []
        : reqs.flatMap((q): LabelRequirement[] => {
            const op = LABEL_OPERATORS[str(q.operator)];
            return op ? [{ key: str(q.key), operator: op, values: [...strings(q.values)].sort() }] : [];
          });
    if (list.length) out.labelSelector = list;
  }
  return out;
}

/** ResourceAttributesFrom / NonResourceAttributesFrom: what the authorizers are asked. */
export function attributesFrom(user: UserInfo, spec: JsonObject): Attributes {
  const r = rec(spec.resourceAttributes);
  if (r) {
    return {
      ...reviewSelectors(r),
      user,
      verb: str(r.verb),
      isResourceRequest: true,
      path: '',
      namespace: str(r.namespace),
      apiGroup: str(r.group),
      // An unspecified version means any version.
      apiVersion: str(r.version) || '*',
      resource: str(r.resource),
      subresource: str(r.subresource),
      name: str(r.name),
    };
  }
  const n = rec(spec.nonResourceAttributes) ?? {};
  return { user, verb: str(n.verb), isResourceRequest: false, path: str(n.path), namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '' };
}

/** The subject a SubjectAccessReview names: exactly what the spec says (no group is added). */
function subjectOf(spec: JsonObject): UserInfo {
  const extra = rec(spec.extra);
  const uid = str(spec.uid);
  return {
    name: str(spec.user),
    groups: strings(spec.groups),
    ...(uid ? { uid } : {}),
    ...(extra ? { extra: Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, strings(v)])) } : {}),
  };
}

async function accessReviewStatus(ctx: ReviewContext, subject: UserInfo, spec: JsonObject): Promise<JsonObject> {
  const attrs = attributesFrom(subject, spec);
  const d = await decide(ctx.authorizers, attrs);
  const evaluationErrors = [...(d.evaluationError ? [d.evaluationError] : []), ...selectorParseNotes(rec(spec.resourceAttributes) ?? {})];
  // allowed is always written; denied, reason and evaluationError are omitempty upstream.
  const status: JsonObject = { allowed: d.decision === 'allow' };
  if (d.decision === 'deny') status.denied = true;
  if (d.reason) status.reason = d.reason;
  if (evaluationErrors.length) status.evaluationError = evaluationErrors.join('; ');
  return status;
}

function userInfoOf(user: UserInfo): JsonObject {
  const out: JsonObject = { username: user.name };
  if (user.uid) out.uid = user.uid;
  if (user.groups.length) out.groups = [...user.groups];
  if (user.extra && Object.keys(user.extra).length) out.extra = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]));
  return out;
}

const invalidKind = (ctx: ReviewContext, kind: ReviewKind, errs: readonly FieldError[]) =>
  // NewInvalid(authorizationapi.Kind(kind), "", errs): an empty name, the group in the naming.
  errors.invalid({ group: ctx.naming.group('authorization.k8s.io'), name: kind }, '', errs);

/**
 * Answers one review: the decoded request (apiVersion, kind and metadata already checked
 * against the URL) in, the response object out. Throws StatusErrors for requests upstream
 * refuses (422 for validation, 400 for what its REST storage checks itself).
 */
export async function answerReview(kind: ReviewKind, obj: JsonObject, ctx: ReviewContext): Promise<JsonObject> {
  const spec = rec(obj.spec) ?? {};
  // Fields in upstream's order (kind, apiVersion, metadata, spec, status); anything else the
  // body carried was dropped or refused by field validation already.
  const head = { kind: obj.kind, apiVersion: obj.apiVersion };
  switch (kind) {
    case 'SelfSubjectAccessReview':
    case 'SubjectAccessReview':
    case 'LocalSubjectAccessReview': {
      const body: JsonObject = { ...obj };
      if (kind === 'LocalSubjectAccessReview') {
        // The create handler fills an unset namespace from the URL before validation.
        body.metadata = { ...(rec(obj.metadata) ?? {}), namespace: str(rec(obj.metadata)?.namespace) || ctx.namespace };
      }
      const errs = validateAccessReview(kind, body);
      if (errs.length) throw invalidKind(ctx, kind, errs);
      const subject = kind === 'SelfSubjectAccessReview' ? ctx.user : subjectOf(spec);
      return { ...head, metadata: rec(body.metadata) ?? {}, spec, status: await accessReviewStatus(ctx, subject, spec) };
    }
    case 'SelfSubjectRulesReview': {
      const namespace = str(spec.namespace);
      if (namespace === '') throw errors.badRequest('no namespace on request');
      const rules = await rulesFor(ctx.authorizers, ctx.user, namespace);
      const status: JsonObject = { resourceRules: rules.resourceRules, nonResourceRules: rules.nonResourceRules, incomplete: rules.incomplete };
      if (rules.evaluationError) status.evaluationError = rules.evaluationError;
      // Upstream answers a new object: the spec (the namespace asked about) is not echoed.
      return { ...head, metadata: {}, spec: {}, status };
    }
    case 'SelfSubjectReview':
      // A new object too, stamped with the time it was made, as upstream's storage does.
      return { ...head, metadata: { creationTimestamp: ctx.now().toISOString().replace(/\.\d{3}Z$/, 'Z') }, status: { userInfo: userInfoOf(ctx.user) } };
    case 'TokenReview':
      return { ...head, metadata: rec(obj.metadata) ?? {}, spec, status: await tokenReviewStatus(ctx, spec) };
  }
}

/**
 * TokenReview: the token goes through the request authenticators as the only credential of a
 * request (an `Authorization: Bearer` header, no client certificate, anonymous off), with the
 * review's audiences (the API audiences when it names none), as upstream's REST storage does.
 * status.audiences are the audiences the token was found valid for.
 */
async function tokenReviewStatus(ctx: ReviewContext, spec: JsonObject): Promise<JsonObject> {
  const token = str(spec.token);
  if (token === '') throw errors.badRequest('token is required for TokenReview in authentication');
  const audiences = strings(spec.audiences);
  const result = await authenticate(
    ctx.authenticators,
    {
      header: (name) => (name.toLowerCase() === 'authorization' ? `Bearer ${token}` : undefined),
      peerCertificate: undefined,
      ...(audiences.length > 0 ? { audiences } : {}),
    },
    { anonymous: false },
  );
  if ('user' in result) {
    const status: JsonObject = { authenticated: true, user: userInfoOf(result.user) };
    if (result.audiences && result.audiences.length > 0) status.audiences = [...result.audiences];
    return status;
  }
  // Upstream's status.user is a struct, written even when empty.
  const error = result.error === 'no credentials' ? 'invalid bearer token' : result.error;
  return { user: {}, error };
}

// ---------------------------------------------------------------------------------------------
// HTTP.

/** Serves a request for a review resource: routing as upstream's installer, then answerReview. */
export async function handleReview(c: Context<Env>, deps: HttpDeps, resource: ResourceInfo, kind: ReviewKind): Promise<Response> {
  const info = c.get('info');
  // Only the collection path exists: no item or sub-resource paths, and a namespaced kind
  // (LocalSubjectAccessReview) has no cluster-wide path, a cluster-scoped one no namespaced path.
  if (info.name || info.subresource || resource.namespaced !== Boolean(info.namespace)) throw errors.pathNotFound();
  if (info.verb !== 'create') throw errors.methodNotSupported({ group: resource.group, name: resource.resource }, c.req.method);
  // The shared checks (namespace segment, dryRun and fieldValidation values, field manager).
  const rr = resolveResourceRequest(c, deps);
  const rep = chooseRepresentation(c, deps, resource, 'write');
  const obj = await readWriteBody(c, deps, rr, { apiVersion: resource.apiVersion, kind: resource.kind });
  const answer = await answerReview(kind, obj, {
    user: c.get('user'),
    namespace: rr.namespace,
    authorizers: requestChain(c, deps.authorizers),
    authenticators: deps.authenticators,
    naming: deps.naming,
    now: deps.now,
  });
  return writeObject(c, deps, rep, resource, answer, 200);
}
