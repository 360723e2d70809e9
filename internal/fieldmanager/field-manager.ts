// internal/fieldmanager/field-manager owns field management for one kind (§2.7, §2.9, §4.9):
// `update` records who changed what on every non-apply write, `apply` performs server-side
// apply. It layers upstream's field-manager behaviour over the Updater:
//   - managers are identified by name + operation + subresource (+ apiVersion for updates), an
//     empty name is "unknown";
//   - managedFields sent with an update replace the stored ones, an empty list keeps the stored
//     ones, `[{}]` resets them (the requester then owns every field it sends); subresource
//     writes never change them;
//   - an existing object nobody tracks stays untracked by updates; an apply to it first records
//     everything it has under "before-first-apply";
//   - identity fields (apiVersion, kind, name, namespace, uid, resourceVersion, generation,
//     creationTimestamp, managedFields, …) are never owned;
//   - an entry's time moves only when its manager changed something;
//   - at most ten Update entries are kept, older ones merge into "ancient-changes";
//   - an apply body must have the endpoint's apiVersion and kind and no managedFields, and must
//     fit the schema; conflicts are a 409 unless forced; the merged object is defaulted, and for
//     built-in kinds an applied `null` unsets the field (a Go struct cannot hold it).
// The engine is pure: objects in, objects out, time supplied by the caller.
// Imports: apierrors, patch/{json-value,type-node}, fieldmanager/*.

import { errors, StatusError } from '../apierrors/status.js';
import { cloneJson, copyMembers, isJsonObject, jsonTypeName, setMember, withoutMember, type JsonObject, type JsonValue } from '../patch/json-value.js';
import type { TypeNode } from '../patch/type-node.js';
import { applyConflictError } from './conflicts.js';
import { FieldSet } from './field-set.js';
import {
  capUpdateManagers,
  decodeManagedFields,
  DEFAULT_MAX_UPDATE_MANAGERS,
  emptyManaged,
  encodeManagedFields,
  isResetManagedFields,
  managerIdentifier,
  type Managed,
  type ManagedFieldsEntry,
} from './managed-fields.js';
import { createdFieldsV1 } from './created-fields.js';
import { fieldElement } from './path-element.js';
import { smdTypeOf, type SmdType } from './smd-type.js';
import { typeErrorsText, validate } from './typed-value.js';
import { ApplyConflicts, Updater } from './updater.js';
import { withZeroValues } from './zero-values.js';

/** The manager that owns what an untracked object had when it is first applied to. */
export const BEFORE_FIRST_APPLY_MANAGER = 'before-first-apply';

export interface FieldManagerConfig {
  /** The kind's schema root; undefined means schemaless (every key a field, lists atomic). */
  readonly schema: TypeNode | undefined;
  /** The kind apply bodies must carry (checked with the request's apiVersion). */
  readonly kind?: string;
  /**
   * `typed` for built-in kinds: like upstream's Go structs, a new object already has its value
   * structs (schema default `{}`: spec, template, …) and required lists (null), so creating one
   * does not record those as added (no `.` entry). `unstructured` (default) for custom resources.
   */
  readonly objectModel?: 'typed' | 'unstructured';
  /** Fields nobody owns through this endpoint (the strategy resets them), per subresource. */
  readonly ignoredFields?: FieldSet | ((subresource: string | undefined) => FieldSet | undefined);
  /** Applies the kind's defaults to an applied object (may mutate it or return a new one). */
  readonly defaulter?: (obj: JsonObject) => JsonObject | void;
  /** Cap on Update entries (default 10). */
  readonly maxUpdateManagers?: number;
  /**
   * Told when an update could not record ownership (the object is then stored without managed
   * fields, as upstream does); for logging. Must not throw.
   */
  readonly onUpdateError?: (err: unknown) => void;
  /**
   * False: creates take the general path too (the diff against nothing or the zero value)
   * instead of writing their managed fields in one walk; for tests comparing the two.
   */
  readonly createWalk?: boolean;
}

export interface WriteOptions {
  /** `fieldManager`, or managerFromUserAgent(); empty means "unknown". */
  readonly manager: string;
  /** The request's group/version, for example `apps/v1` or `v1`. */
  readonly apiVersion: string;
  /** Now; stored with seconds precision. */
  readonly time: Date | string;
  /** `status`, `scale`, … for writes to a subresource. */
  readonly subresource?: string;
}

export interface UpdateOptions extends WriteOptions {
  readonly operation?: 'Update';
}

export interface ApplyOptions extends WriteOptions {
  readonly force?: boolean;
  /**
   * False when the caller defaults the returned object itself (the registry's update path
   * defaults every write after carrying over the fields the server owns): defaulting here as
   * well walked the whole merged object a second time per apply. Managed fields do not depend
   * on it; they are worked out before defaulting either way.
   */
  readonly defaults?: boolean;
}

/** Paths whose ownership is never recorded (upstream's strip set). */
const STRIPPED = FieldSet.of(
  [fieldElement('apiVersion')],
  [fieldElement('kind')],
  [fieldElement('metadata')],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map(
    (f) => [fieldElement('metadata'), fieldElement(f)],
  ),
);

/** A field set from paths of field names, for `ignoredFields`: fieldPaths(['status']). */
export function fieldPaths(...paths: ReadonlyArray<readonly string[]>): FieldSet {
  return FieldSet.of(...paths.map((p) => p.map(fieldElement)));
}

/** The last second formatted: every write formats "now", and writes come many to a second. */
let lastSecond = NaN;
let lastFormatted = '';

/** RFC 3339 in UTC with seconds precision, as metav1.Time serializes. */
export function formatTime(time: Date | string): string {
  const d = typeof time === 'string' ? new Date(time) : time;
  const ms = d.getTime();
  if (Number.isNaN(ms)) throw new Error(`invalid time ${String(time)}`);
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    lastFormatted = d.toISOString().replace(/\.\d+Z$/, 'Z');
    lastSecond = second;
  }
  return lastFormatted;
}

export class FieldManager {
  private readonly type: SmdType;

  constructor(private readonly config: FieldManagerConfig) {
    this.type = smdTypeOf(config.schema);
  }

  /**
   * Records ownership for a non-apply write (create, update, patch) and returns `next` with
   * `metadata.managedFields` set (a shallow copy; nested values are shared with `next`).
   * `live` is the stored object, undefined on create. Never fails: input the field manager
   * cannot make sense of leaves the object without managed fields, as upstream does.
   */
  update(live: JsonObject | undefined, next: JsonObject, options: UpdateOptions): JsonObject {
    const stripped = withoutManagedFields(next);
    const time = formatTime(options.time);
    if (live === undefined && !options.subresource && this.config.createWalk !== false) {
      const created = this.created(next, stripped, options, time);
      if (created !== undefined) return created;
    }
    try {
      const subresource = options.subresource || undefined;
      const requested = isJsonObject(next.metadata) ? next.metadata.managedFields : undefined;
      const reset = !subresource && isResetManagedFields(requested);
      let managed: Managed;
      if (subresource) managed = decodeLenient(live);
      else if (reset) managed = emptyManaged();
      else {
        managed = decodeOrUndefined(requested) ?? emptyManaged();
        if (managed.sets.size === 0) managed = decodeLenient(live);
      }
      const isCreate = live === undefined || !(isJsonObject(live.metadata) && live.metadata.uid);
      // An existing object nobody tracks stays untracked (upstream only starts on create/apply).
      if (managed.sets.size === 0 && !isCreate && !reset) return stripped;

      const base = reset || live === undefined ? undefined : withoutManagedFields(live);
      this.recordUpdate(base, stripped, managed, options.manager, options.apiVersion, subresource, time);
      capUpdateManagers(managed, this.config.maxUpdateManagers ?? DEFAULT_MAX_UPDATE_MANAGERS);
      return withManagedFields(stripped, managed);
    } catch (err) {
      if (err instanceof StatusError) throw err;
      this.config.onUpdateError?.(err);
      return stripped;
    }
  }

  /**
   * A create's managed fields written in one walk of the object (created-fields), when the
   * request brings no managed fields of its own (or the reset value): the one entry the
   * general path would write, field for field. Undefined when the walk leaves the object to the
   * general path.
   */
  private created(next: JsonObject, stripped: JsonObject, options: UpdateOptions, time: string): JsonObject | undefined {
    const requested = isJsonObject(next.metadata) ? next.metadata.managedFields : undefined;
    const none = requested === undefined || requested === null || (Array.isArray(requested) && requested.length === 0) || isResetManagedFields(requested);
    if (!none) return undefined;
    const fieldsV1 = createdFieldsV1(stripped, this.type, this.config.objectModel === 'typed', this.ignored(undefined), STRIPPED);
    if (fieldsV1 === undefined) return undefined;
    if (fieldsV1 === null) return stripped;
    const entry: ManagedFieldsEntry = {
      manager: options.manager || 'unknown',
      operation: 'Update',
      apiVersion: options.apiVersion,
      time,
      fieldsType: 'FieldsV1',
      fieldsV1,
    };
    const meta = isJsonObject(stripped.metadata) ? stripped.metadata : undefined;
    return { ...stripped, metadata: withMember(meta, 'managedFields', [entry] as unknown as JsonValue) };
  }

  /**
   * Server-side apply of `config` (the decoded body) to `live` (undefined: the object does not
   * exist yet). Returns the object to store, with `metadata.managedFields`. Throws StatusError:
   * 400 for a body of the wrong type/version or with managedFields, 409 for conflicts (one cause
   * per field), 500 (upstream's answer) for a body that does not fit the schema.
   */
  apply(live: JsonObject | undefined, config: unknown, options: ApplyOptions): JsonObject {
    if (!isJsonObject(config)) {
      throw errors.badRequest(`error decoding YAML: the apply patch must be an object, got ${jsonTypeName(config)}`);
    }
    this.checkVersion(config, options.apiVersion);
    const time = formatTime(options.time);
    const subresource = options.subresource || undefined;
    const managed = decodeLenient(live);
    const liveView = live ? withoutManagedFields(live) : undefined;
    if (liveView && managed.sets.size === 0) {
      // Everything an untracked object has so far belongs to its earlier writers, whom apply
      // must not silently overwrite.
      this.recordUpdate(undefined, liveView, managed, BEFORE_FIRST_APPLY_MANAGER, options.apiVersion, subresource, time);
    }
    const meta = config.metadata;
    if (isJsonObject(meta) && meta.managedFields !== undefined && meta.managedFields !== null) {
      throw errors.badRequest('metadata.managedFields must be nil');
    }
    if (!this.type.deduced && this.type.map && !this.type.map.field('metadata')) {
      throw errors.badRequest('apply is only supported for objects with metadata');
    }
    const problems = validate(config, this.type);
    if (problems.length > 0) {
      throw typedPatchError(`failed to create typed patch object (${objectRef(config)}): ${typeErrorsText(problems)}`);
    }

    const id = managerIdentifier({ manager: options.manager || 'unknown', operation: 'Apply', subresource });
    const updater = new Updater(this.type, { ignored: this.ignored(subresource) });
    let result: ReturnType<Updater['apply']>;
    try {
      result = updater.apply(liveView, config, options.apiVersion, managed.sets, id, options.force === true);
    } catch (err) {
      if (err instanceof ApplyConflicts) throw applyConflictError(err.conflicts);
      throw err;
    }
    replaceSets(managed, result.managers);
    stripIdentity(managed, id);
    let object: JsonObject;
    if (result.object !== undefined) {
      const merged = isJsonObject(result.object) ? result.object : {};
      // A Go struct cannot hold an explicit null: an applied `field: null` means "unset".
      object = this.config.objectModel === 'typed' ? withoutNullMembers(merged) : cloneJson(merged);
      managed.times.set(id, time);
      if (this.config.defaulter && options.defaults !== false) object = this.config.defaulter(object) ?? object;
    } else {
      object = cloneJson(liveView ?? {});
    }
    capUpdateManagers(managed, this.config.maxUpdateManagers ?? DEFAULT_MAX_UPDATE_MANAGERS);
    return withManagedFields(withoutManagedFields(object), managed);
  }

  /**
   * The update path shared by writes and "before-first-apply": records `manager`'s changes from
   * `live` (undefined: a new object) to `next`.
   */
  private recordUpdate(
    live: JsonObject | undefined,
    next: JsonObject,
    managed: Managed,
    manager: string,
    apiVersion: string,
    subresource: string | undefined,
    time: string,
  ): void {
    const id = managerIdentifier({ manager: manager || 'unknown', operation: 'Update', apiVersion, subresource });
    // The write is first recorded under a temporary name, so that the manager's earlier entry
    // loses changed fields like any other, and its time only moves if this write took fields.
    const current = '\u0000current-operation';
    const updater = new Updater(this.type, { ignored: this.ignored(subresource) });
    const typed = this.config.objectModel === 'typed';
    const before = typed ? withZeroValues(live ?? {}, this.type) : live;
    const after = typed ? (withZeroValues(next, this.type) as JsonObject) : next;
    const sets = updater.update(before, after, apiVersion, managed.sets, current);
    replaceSets(managed, sets);
    stripIdentity(managed, current);
    const vs = managed.sets.get(current);
    if (!vs) return;
    managed.sets.delete(current);
    const previous = managed.sets.get(id);
    managed.sets.set(id, { set: previous ? vs.set.union(previous.set) : vs.set, apiVersion: vs.apiVersion, applied: false });
    managed.times.set(id, time);
  }

  private checkVersion(config: JsonObject, apiVersion: string): void {
    const kind = this.config.kind;
    if (kind !== undefined) {
      if (config.apiVersion !== apiVersion || config.kind !== kind) {
        throw errors.badRequest(`invalid object type: ${gvkString(config)}`);
      }
    } else if (config.apiVersion !== apiVersion) {
      throw errors.badRequest(
        `Incorrect version specified in apply patch. Specified patch version: ${gvString(config.apiVersion)}, expected: ${apiVersion}`,
      );
    }
  }

  private ignored(subresource: string | undefined): FieldSet | undefined {
    const ig = this.config.ignoredFields;
    return typeof ig === 'function' ? ig(subresource) : ig;
  }
}

/** A deep copy without null object members (null list items stay). */
function withoutNullMembers(obj: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(obj)) {
    const v = obj[key];
    if (v === null || v === undefined) continue;
    out[key] = dropNulls(v);
  }
  return out;
}

function dropNulls(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map((item) => (item === null ? null : dropNulls(item)));
  return isJsonObject(v) ? withoutNullMembers(v) : v;
}

function stripIdentity(managed: Managed, id: string): void {
  const vs = managed.sets.get(id);
  if (!vs) return;
  const set = vs.set.difference(STRIPPED);
  if (set.isEmpty()) managed.sets.delete(id);
  else managed.sets.set(id, { ...vs, set });
}

function replaceSets(managed: Managed, sets: Managed['sets']): void {
  if (sets === managed.sets) return;
  managed.sets.clear();
  for (const [k, v] of sets) managed.sets.set(k, v);
}

function decodeOrUndefined(entries: unknown): Managed | undefined {
  try {
    return decodeManagedFields(entries);
  } catch {
    return undefined;
  }
}

/** The stored managed fields; unreadable ones count as none, as upstream treats them. */
function decodeLenient(live: JsonObject | undefined): Managed {
  const entries = live && isJsonObject(live.metadata) ? live.metadata.managedFields : undefined;
  return decodeOrUndefined(entries) ?? emptyManaged();
}

function withoutManagedFields(obj: JsonObject): JsonObject {
  const meta = obj.metadata;
  if (!isJsonObject(meta) || !Object.hasOwn(meta, 'managedFields')) return obj;
  // withoutMember, not a rest pattern (V8 runs those in its runtime, at several times the cost):
  // every update of a tracked object comes here.
  return { ...obj, metadata: withoutMember(meta, 'managedFields') };
}

function withManagedFields(obj: JsonObject, managed: Managed): JsonObject {
  const entries = encodeManagedFields(managed);
  const meta = isJsonObject(obj.metadata) ? obj.metadata : undefined;
  if (!entries) return obj;
  return { ...obj, metadata: withMember(meta, 'managedFields', entries as unknown as JsonValue) };
}

/**
 * `{ ...obj, [key]: value }` by copyMembers: V8 gives a spread followed by a member its source
 * lacks a slow path (about a microsecond for a pod's metadata, against a tenth of that here),
 * and every tracked write gives its stripped metadata back its managedFields here.
 */
function withMember(obj: JsonObject | undefined, key: string, value: JsonValue): JsonObject {
  const out = obj ? copyMembers(obj) : {};
  setMember(out, key, value);
  return out;
}

function gvString(apiVersion: JsonValue | undefined): string {
  return typeof apiVersion === 'string' ? apiVersion : '';
}

/** Go's GroupVersionKind.String(): `apps/v1, Kind=Deployment`, `/v1, Kind=Pod`. */
function gvkString(obj: JsonObject): string {
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  const slash = apiVersion.indexOf('/');
  const [group, version] = slash >= 0 ? [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)] : ['', apiVersion];
  return `${group}/${version}, Kind=${kind}`;
}

/** `namespace/name; apps/v1, Kind=Deployment`, as upstream names the object in apply errors. */
function objectRef(obj: JsonObject): string {
  const meta = isJsonObject(obj.metadata) ? obj.metadata : {};
  const name = typeof meta.name === 'string' ? meta.name : '';
  const namespace = typeof meta.namespace === 'string' ? meta.namespace : '';
  return `${namespace}/${name}; ${gvkString(obj)}`;
}

/** Upstream answers schema errors in an apply body with a 500 carrying the typed-conversion text. */
function typedPatchError(message: string): StatusError {
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: 'InternalError',
    details: { causes: [{ message }] },
    code: 500,
  });
}
