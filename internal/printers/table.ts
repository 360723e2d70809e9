// internal/printers/table owns turning objects into the Table representation
// (`Accept: application/json;as=Table;g=meta.<domain>;v=v1`): picking the kind's printer or the
// default Name / Created At table, the row object per `includeObject` (the object, its
// PartialObjectMetadata, or nothing), and the column definitions alone for watch streams of rows.
// The caller owns list metadata (resourceVersion, continue, remainingItemCount).
// Imports: naming (types), printer-kit, pod-printer, core-printers, workload-printers,
// cluster-printers, human-duration, table-types.

import type { Naming } from '../naming/naming.js';
import { clusterPrinters } from './cluster-printers.js';
import { corePrinters } from './core-printers.js';
import { rfc3339 } from './human-duration.js';
import { podPrinter } from './pod-printer.js';
import { columnDefinitions, col, type KindPrinter, metadataOf, NAME_DOC, nameOf, AGE_DOC, type PrintContext } from './printer-kit.js';
import type { IncludeObject, Table, TableColumnDefinition, TableListMeta, TableRow } from './table-types.js';
import { workloadPrinters } from './workload-printers.js';
import { customPrinter, type PrinterColumn } from './custom-printer.js';

/** What the printers need to know about a served resource; the catalog's ResourceInfo fits. */
export interface TableResource {
  /** Group name in the schema data (upstream spelling); '' for the core group. */
  readonly upstreamGroup: string;
  readonly resource: string;
  /** The served version the objects are in. */
  readonly version: string;
  /** Custom resources bring their own printer columns. */
  readonly custom?: { readonly printerColumns: readonly PrinterColumn[] };
}

export interface TableOptions {
  /** Default `Metadata`, as upstream's when the client names none. */
  readonly includeObject?: IncludeObject;
  readonly naming: Naming;
  /** The instant ages are measured from; default the current time. */
  readonly now?: Date;
  /** Omit column definitions (watch events after the first, `TableOptions.noHeaders`). */
  readonly noHeaders?: boolean;
  /** Copied into the table's metadata when given. */
  readonly listMeta?: TableListMeta;
}

/** The table every kind without a printer gets: Name, and Created At as an RFC 3339 date. */
const defaultPrinter: KindPrinter = {
  columns: [col('Name', 'string', NAME_DOC, { format: 'name' }), col('Created At', 'date', AGE_DOC)],
  row: (o) => ({ cells: [nameOf(o), rfc3339(metadataOf(o).creationTimestamp)] }),
};

const PRINTERS: Readonly<Record<string, KindPrinter>> = {
  '/pods': podPrinter,
  ...corePrinters,
  ...workloadPrinters,
  ...clusterPrinters,
};

const customPrinters = new WeakMap<object, KindPrinter>();

function printerFor(r: TableResource): KindPrinter {
  if (r.custom) {
    let p = customPrinters.get(r.custom);
    if (!p) customPrinters.set(r.custom, (p = customPrinter(r.custom.printerColumns)));
    return p;
  }
  return PRINTERS[`${r.upstreamGroup}/${r.resource}`] ?? defaultPrinter;
}

/** True when the resource has its own columns (false: the default Name / Created At table). */
export const hasCustomTable = (r: TableResource): boolean => r.custom !== undefined || `${r.upstreamGroup}/${r.resource}` in PRINTERS;

/** The column definitions of a resource's table, e.g. for the first event of a watch of rows. */
export function columnDefinitionsFor(r: TableResource): TableColumnDefinition[] {
  return columnDefinitions(printerFor(r).columns);
}

/** A PartialObjectMetadata of `obj` in the meta group of the naming. */
export function partialObjectMetadata(obj: unknown, naming: Naming): { kind: 'PartialObjectMetadata'; apiVersion: string; metadata: object } {
  return { kind: 'PartialObjectMetadata', apiVersion: `${naming.metaGroup}/v1`, metadata: metadataOf(obj) };
}

/**
 * One row per object, in the order given (or the kind's list order where upstream sorts, e.g.
 * flow schemas). Never throws for a malformed object: a printer failure leaves the row with the
 * name and `<unknown>` cells, so one bad object cannot break a list.
 */
export function rowsFor(r: TableResource, objects: readonly unknown[], opts: TableOptions): TableRow[] {
  const include = opts.includeObject ?? 'Metadata';
  return printedRows(r, objects, opts).map(({ row, index }) => {
    const o = objects[index];
    if (include === 'Object') row.object = o;
    else if (include === 'Metadata') row.object = partialObjectMetadata(o, opts.naming);
    return row;
  });
}

/**
 * rowsFor's rows without their objects (cells and conditions only), each with the index in
 * `objects` of the object it prints: the rows may be in another order. For a writer that
 * adds each row's object itself (from the object's bytes).
 */
export function printedRows(r: TableResource, objects: readonly unknown[], opts: Omit<TableOptions, 'includeObject'>): Array<{ row: TableRow; index: number }> {
  const printer = printerFor(r);
  const ctx: PrintContext = { naming: opts.naming, now: opts.now ?? new Date(), version: r.version };
  const indices = objects.map((_, i) => i);
  if (printer.compare && objects.length > 1) indices.sort((a, b) => printer.compare!(objects[a], objects[b]));
  return indices.map((index) => {
    const o = objects[index];
    let row: TableRow;
    try {
      const printed = printer.row(o, ctx);
      row = { cells: printed.cells };
      if (printed.conditions) row.conditions = printed.conditions;
    } catch {
      row = { cells: [nameOf(o), ...printer.columns.slice(1).map(() => '<unknown>')] };
    }
    return { row, index };
  });
}

/** The Table for `objects` of one resource. List metadata is the caller's (or opts.listMeta). */
export function tableFor(r: TableResource, objects: readonly unknown[], opts: TableOptions): Table {
  return {
    kind: 'Table',
    apiVersion: `${opts.naming.metaGroup}/v1`,
    metadata: { ...(opts.listMeta ?? {}) },
    columnDefinitions: opts.noHeaders ? [] : columnDefinitionsFor(r),
    rows: rowsFor(r, objects, opts),
  };
}
