// internal/fieldmanager/managed-fields owns `metadata.managedFields` (§2.7) as upstream writes
// and reads it: entries keyed by a manager identifier (manager + operation + subresource, plus
// apiVersion for Update entries, so every applier has one entry whatever version it applies
// at), decoding with upstream's validity rules, encoding with upstream's field order and entry
// order (Apply before Update, then by time, manager, apiVersion, subresource), the reuse of a
// stored `fieldsV1` whose set did not change, and the cap of ten Update entries (older ones are
// merged into `ancient-changes`).
// Imports: memo/bounded-map, patch/json-value, fieldmanager/{field-set,fields-v1,path-element,updater (type only)}.

import { BoundedMap } from '../memo/bounded-map.js';
import { isJsonObject, type JsonObject } from '../patch/json-value.js';
import { FieldSet } from './field-set.js';
import { decodeFieldsV1, encodeFieldsV1 } from './fields-v1.js';
import { compareStrings } from './path-element.js';
import type { ManagedSets } from './updater.js';

export type ManagedFieldsOperation = 'Apply' | 'Update';

/** One `metadata.managedFields` entry as stored (member order as upstream serializes it). */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: ManagedFieldsOperation;
  apiVersion?: string;
  /** RFC 3339, seconds precision. */
  time?: string;
  fieldsType?: 'FieldsV1';
  fieldsV1?: JsonObject;
  subresource?: string;
}

export interface ManagerInfo {
  manager: string;
  operation: ManagedFieldsOperation;
  /** Part of the identity of Update entries only. */
  apiVersion?: string;
  subresource?: string;
}

/** Decoded managed fields: sets and times by manager identifier, plus the stored entries. */
export interface Managed {
  readonly sets: ManagedSets;
  readonly times: Map<string, string>;
  /** The stored entry each identifier came from, to reuse its `fieldsV1` when unchanged. */
  readonly stored: Map<string, { entry: ManagedFieldsEntry; set: FieldSet }>;
}

export const emptyManaged = (): Managed => ({ sets: new Map(), times: new Map(), stored: new Map() });

/**
 * The identity of a manager: the JSON of its entry without time, fields and — for appliers —
 * apiVersion, in Go's member order (`{"manager":"kubectl","operation":"Apply"}`).
 */
export function managerIdentifier(info: ManagerInfo): string {
  const id: Record<string, string> = {};
  if (info.manager) id.manager = info.manager;
  id.operation = info.operation;
  if (info.operation === 'Update' && info.apiVersion) id.apiVersion = info.apiVersion;
  if (info.subresource) id.subresource = info.subresource;
  return JSON.stringify(id);
}

// Identifiers recur on every write of every object (a handful of managers), so their parts
// are remembered; bounded because manager names come from requests.
const parsedIdentifiers = new BoundedMap<string, Readonly<ManagerInfo>>(4096);

/** The parts of an identifier (the inverse of managerIdentifier). Shared: do not modify. */
export function parseManagerIdentifier(id: string): Readonly<ManagerInfo> {
  let info = parsedIdentifiers.get(id);
  if (info === undefined) {
    info = Object.freeze(parseIdentifier(id));
    parsedIdentifiers.set(id, info);
  }
  return info;
}

function parseIdentifier(id: string): ManagerInfo {
  try {
    const parsed = JSON.parse(id) as Partial<ManagerInfo>;
    return {
      manager: typeof parsed.manager === 'string' ? parsed.manager : '',
      operation: parsed.operation === 'Apply' ? 'Apply' : 'Update',
      ...(typeof parsed.apiVersion === 'string' ? { apiVersion: parsed.apiVersion } : {}),
      ...(typeof parsed.subresource === 'string' ? { subresource: parsed.subresource } : {}),
    };
  } catch {
    return { manager: id, operation: 'Update' };
  }
}

/** True for `[{}]`: the one-empty-entry value that resets managed fields (§2.7 rule 5). */
export function isResetManagedFields(value: unknown): boolean {
  if (!Array.isArray(value) || value.length !== 1) return false;
  const entry = value[0];
  if (!isJsonObject(entry)) return false;
  // Go compares against the zero entry, so members set to their zero value count as empty.
  return Object.values(entry).every((v) => v === null || v === '');
}

/** What decoding one valid entry gives, apart from the entry itself. */
interface DecodedEntry {
  readonly id: string;
  readonly set: FieldSet;
  readonly apiVersion: string;
  readonly applied: boolean;
  readonly time: string | undefined;
}

/**
 * Decodes stored entries; throws Error (with upstream's message) on an invalid one.
 *
 * Every write decodes the stored object's entries from a fresh parse of its bytes. The costly
 * part, reading each fieldsV1 into a set, is remembered by decodeFieldsV1 (by the text of that
 * fieldsV1: objects of one shape share it). The list as a whole is not remembered by its text:
 * its entries carry their times, which differ between objects written in different seconds, so
 * that memo missed on most writes and then cost a second serialization of the whole list.
 */
export function decodeManagedFields(entries: unknown): Managed {
  if (entries === undefined || entries === null) return emptyManaged();
  if (!Array.isArray(entries)) throw new Error('managedFields must be a list');
  const decoded = entries.map(decodeEntry);
  // The maps are the caller's to change; sets are immutable, and each stored entry is the
  // caller's own (its fieldsV1 is reused when the set did not change).
  const managed = emptyManaged();
  decoded.forEach((d, i) => {
    managed.sets.set(d.id, { set: d.set, apiVersion: d.apiVersion, applied: d.applied });
    if (d.time !== undefined) managed.times.set(d.id, d.time);
    else managed.times.delete(d.id);
    managed.stored.set(d.id, { entry: entries[i] as ManagedFieldsEntry, set: d.set });
  });
  return managed;
}

function decodeEntry(raw: unknown, i: number): DecodedEntry {
  if (!isJsonObject(raw)) throw new Error(`managed fields entry ${i} must be an object`);
  const entry = raw as ManagedFieldsEntry & JsonObject;
  if (entry.operation !== 'Apply' && entry.operation !== 'Update') throw new Error('operation must be `Apply` or `Update`');
  if (typeof entry.apiVersion !== 'string' || entry.apiVersion.length < 1) throw new Error('apiVersion must not be empty');
  if (entry.fieldsType === undefined || entry.fieldsType === null || (entry.fieldsType as string) === '') {
    throw new Error(`missing fieldsType in managed fields entry ${i}`);
  }
  if (entry.fieldsType !== 'FieldsV1') throw new Error(`invalid fieldsType ${JSON.stringify(entry.fieldsType)} in managed fields entry ${i}`);
  if (entry.manager !== undefined && entry.manager !== null && typeof entry.manager !== 'string') {
    throw new Error(`manager must be a string in managed fields entry ${i}`);
  }
  const info: ManagerInfo = {
    manager: typeof entry.manager === 'string' ? entry.manager : '',
    operation: entry.operation,
    apiVersion: entry.apiVersion,
    ...(typeof entry.subresource === 'string' && entry.subresource ? { subresource: entry.subresource } : {}),
  };
  let set: FieldSet;
  try {
    set = entry.fieldsV1 === undefined || entry.fieldsV1 === null ? new FieldSet() : decodeFieldsV1(entry.fieldsV1);
  } catch (err) {
    throw new Error(`error decoding versioned set from managed fields entry ${i}: ${(err as Error).message}`);
  }
  return {
    id: managerIdentifier(info),
    set,
    apiVersion: entry.apiVersion,
    applied: entry.operation === 'Apply',
    time: typeof entry.time === 'string' ? entry.time : undefined,
  };
}

// Entry times repeat across writes (entries keep theirs until their manager changes
// something), and parsing them was a visible part of encoding; bounded, they come from requests.
const parsedSeconds = new BoundedMap<string, number>(1024);

const unixSeconds = (time: string | undefined): number => {
  if (!time) return 0;
  let seconds = parsedSeconds.get(time);
  if (seconds === undefined) {
    const ms = Date.parse(time);
    seconds = Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
    parsedSeconds.set(time, seconds);
  }
  return seconds;
};

/** Go compares strings by bytes. */
const byteCompare = compareStrings;

/** Entries for `metadata.managedFields`, in upstream's order; undefined when there are none. */
export function encodeManagedFields(managed: Managed): ManagedFieldsEntry[] | undefined {
  if (managed.sets.size === 0) return undefined;
  const out: ManagedFieldsEntry[] = [];
  const seconds = new Map<ManagedFieldsEntry, number>();
  for (const [id, vs] of managed.sets) {
    const info = parseManagerIdentifier(id);
    const entry: ManagedFieldsEntry = {};
    if (info.manager) entry.manager = info.manager;
    entry.operation = vs.applied ? 'Apply' : info.operation;
    entry.apiVersion = vs.apiVersion;
    const time = managed.times.get(id);
    if (time) entry.time = time;
    entry.fieldsType = 'FieldsV1';
    const stored = managed.stored.get(id);
    const reuse =
      stored?.entry.fieldsV1 &&
      stored.entry.apiVersion === vs.apiVersion &&
      (stored.entry.operation === 'Apply') === vs.applied &&
      (stored.set === vs.set || stored.set.equals(vs.set));
    entry.fieldsV1 = reuse ? stored!.entry.fieldsV1! : encodeFieldsV1(vs.set);
    if (info.subresource) entry.subresource = info.subresource;
    out.push(entry);
    seconds.set(entry, unixSeconds(time));
  }
  out.sort(
    (p, q) =>
      byteCompare(p.operation!, q.operation!) ||
      seconds.get(p)! - seconds.get(q)! ||
      byteCompare(p.manager ?? '', q.manager ?? '') ||
      byteCompare(p.apiVersion ?? '', q.apiVersion ?? '') ||
      byteCompare(p.subresource ?? '', q.subresource ?? ''),
  );
  return out;
}

export const DEFAULT_MAX_UPDATE_MANAGERS = 10;
export const ANCIENT_CHANGES_MANAGER = 'ancient-changes';

/**
 * Merges the oldest Update entries into one `ancient-changes` entry per apiVersion until at most
 * `max` Update entries remain. Mutates `managed`.
 */
export function capUpdateManagers(managed: Managed, max = DEFAULT_MAX_UPDATE_MANAGERS): void {
  const updaters = [...managed.sets].filter(([, vs]) => !vs.applied).map(([id]) => id);
  if (updaters.length <= max) return;
  updaters.sort(
    (a, b) => unixSeconds(managed.times.get(a)) - unixSeconds(managed.times.get(b)) || byteCompare(a, b),
  );
  const firstByVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > max; i++) {
    const id = updaters[i]!;
    const vs = managed.sets.get(id)!;
    const time = managed.times.get(id);
    const bucket = managerIdentifier({ manager: ANCIENT_CHANGES_MANAGER, operation: 'Update', apiVersion: vs.apiVersion });
    const first = firstByVersion.get(vs.apiVersion);
    if (first === undefined) {
      firstByVersion.set(vs.apiVersion, id);
      continue;
    }
    if (!managed.sets.has(bucket)) {
      const s = managed.sets.get(first)!;
      managed.sets.delete(first);
      managed.sets.set(bucket, s);
    }
    managed.sets.set(bucket, { set: vs.set.union(managed.sets.get(bucket)!.set), apiVersion: vs.apiVersion, applied: vs.applied });
    managed.sets.delete(id);
    length--;
    if (time) managed.times.set(bucket, time);
    else managed.times.delete(bucket);
  }
}
