// internal/printers/printer-kit owns what every kind's printer is built from: column specs with
// descriptions looked up lazily in the OpenAPI schemas (the same doc text upstream takes from
// SwaggerDoc), the print context (naming, clock, served version), the printer contract, and the
// small cell formatters upstream's printers share (container lists, label sets, booleans, lists
// with "+ N more...", quantities, int-or-strings).
// Imports: naming (types), schema/openapi-index, table-types.

import type { Naming } from '../naming/naming.js';
import { builtinSchemas } from '../schema/openapi-index.js';
import { timeSince } from './human-duration.js';
import type { ColumnType, TableCell, TableColumnDefinition, TableRowCondition } from './table-types.js';

/** What a printer may know about its surroundings. */
export interface PrintContext {
  readonly naming: Naming;
  /** The instant ages are measured from. */
  readonly now: Date;
  /** The served version of the objects (some kinds differ between versions, e.g. HPA v1/v2). */
  readonly version: string;
}

export interface PrintedRow {
  cells: TableCell[];
  conditions?: TableRowCondition[];
}

/**
 * One kind's table: its columns (every priority; clients hide priority > 0 unless wide) and a
 * row function that must return one cell per column. `compare`, when present, orders a list
 * the way upstream's list printer does.
 */
export interface KindPrinter {
  readonly columns: readonly ColumnSpec[];
  row(obj: unknown, ctx: PrintContext): PrintedRow;
  compare?(a: unknown, b: unknown): number;
}

/** A description: literal text, or the doc of `field` in an OpenAPI component schema. */
export type DescriptionSource = string | { readonly schema: string; readonly field: string };

export interface ColumnSpec {
  readonly name: string;
  readonly type: ColumnType;
  readonly description: DescriptionSource;
  readonly priority?: number;
  readonly format?: string;
}

/** Schema field doc, e.g. doc('core.v1.PodStatus', 'podIP') → io.k8s.api.core.v1.PodStatus.podIP. */
export const doc = (schema: string, field: string): DescriptionSource => ({
  schema: schema.startsWith('io.k8s.') ? schema : `io.k8s.api.${schema}`,
  field,
});
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
export const NAME_DOC = doc(META, 'name');
export const AGE_DOC = doc(META, 'creationTimestamp');

export const col = (
  name: string,
  type: ColumnType,
  description: DescriptionSource,
  opts: { priority?: number; format?: string } = {},
): ColumnSpec => ({ name, type, description, ...opts });

/** The Name column every kind starts with. */
export const nameCol = (): ColumnSpec => col('Name', 'string', NAME_DOC, { format: 'name' });
export const ageCol = (): ColumnSpec => col('Age', 'string', AGE_DOC);
export const containersCol = (priority = 1): ColumnSpec =>
  col('Containers', 'string', 'Names of each container in the template.', { priority });
export const imagesCol = (priority = 1): ColumnSpec =>
  col('Images', 'string', 'Images referenced by each container in the template.', { priority });

const descriptionCache = new Map<string, string>();

function describe(source: DescriptionSource): string {
  if (typeof source === 'string') return source;
  const key = `${source.schema}#${source.field}`;
  let text = descriptionCache.get(key);
  if (text === undefined) {
    // Documentation only: a schema the data lacks yields an empty description, never an error.
    try {
      const node = builtinSchemas.get(source.schema)?.properties?.[source.field];
      text = node?.description ?? '';
    } catch {
      text = '';
    }
    descriptionCache.set(key, text);
  }
  return text;
}

/** Column specs → wire column definitions (every member present, as upstream encodes them). */
export function columnDefinitions(specs: readonly ColumnSpec[]): TableColumnDefinition[] {
  return specs.map((c) => ({
    name: c.name,
    type: c.type,
    format: c.format ?? '',
    description: describe(c.description),
    priority: c.priority ?? 0,
  }));
}

// ---------------------------------------------------------------------------------------------
// Defensive readers: stored objects passed schema validation, but a table must never crash on
// one that did not, so the places that call methods on values go through these.

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const obj = (v: unknown): Obj => (isObj(v) ? v : {});
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown, dflt = ''): string => (typeof v === 'string' ? v : dflt);
export const num = (v: unknown, dflt = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : dflt);
export const strMap = (v: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(obj(v))) if (typeof x === 'string') out[k] = x;
  return out;
};

/** Follows a path of property names; undefined as soon as one is missing. */
export function at(v: unknown, ...path: string[]): unknown {
  let cur = v;
  for (const p of path) {
    if (!isObj(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}

export const metadataOf = (o: unknown): Obj => obj(at(o, 'metadata'));
export const nameOf = (o: unknown): string => str(metadataOf(o).name);
export const creationOf = (o: unknown): unknown => metadataOf(o).creationTimestamp;
/** The Age cell: time since creation, as of the table's `now`. */
export const age = (o: unknown, ctx: PrintContext): string => timeSince(creationOf(o), ctx.now);
export const isDeleting = (o: unknown): boolean => typeof metadataOf(o).deletionTimestamp === 'string';

/** Upstream's layoutContainerCells: names and images, each joined by commas. */
export function containerCells(containers: unknown): [string, string] {
  const cs = list(containers).map(obj);
  return [cs.map((c) => str(c.name)).join(','), cs.map((c) => str(c.image)).join(',')];
}

/** Upstream's printBool / printBoolPtr: `True`, `False`, `<unset>`. */
export const boolText = (v: unknown): string => (v === true ? 'True' : v === false ? 'False' : '<unset>');

/** A Quantity as text. Stored quantities are kept as written; a missing one is Go's zero, `0`. */
export const quantityText = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '0');

/** An IntOrString as Go's String() prints it. */
export const intOrStringText = (v: unknown): string => (typeof v === 'number' ? String(v) : str(v));

/** Upstream's listWithMoreString: at most `max` entries, then ` + N more...`; `<unset>` when empty. */
export function listWithMore(items: readonly string[], max = 3): string {
  const shown = items.slice(0, max).join(',');
  if (items.length > max) return `${shown} + ${items.length - max} more...`;
  return shown === '' ? '<unset>' : shown;
}

/** Go's net.JoinHostPort: IPv6 literals get brackets. */
export const joinHostPort = (host: string, port: number | string): string =>
  host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;

/** Byte-wise string order, as Go's sort.Strings. */
export const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A group/kind as Go's GroupKind.String(): `Kind.group`, or `Kind` for the core group. */
export const groupKindText = (group: string, kind: string): string => (group ? `${kind}.${group}` : kind);

/** The group of an apiVersion (`apps/v1` → `apps`, `v1` → ''). */
export const groupOfApiVersion = (apiVersion: string): string => {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
};
