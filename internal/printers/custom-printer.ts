// internal/printers/custom-printer owns the Table columns of custom resources: Name, then the
// definition's additionalPrinterColumns (values found by their JSON paths, dates shown as
// ages), or Name and Age when the definition lists none, as upstream's default.
// Imports: printer-kit, human-duration, table-types.

import { timeSince } from './human-duration.js';
import { col, type KindPrinter, nameOf, NAME_DOC } from './printer-kit.js';
import type { ColumnType, TableCell } from './table-types.js';

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

const TYPES: readonly string[] = ['string', 'integer', 'number', 'boolean', 'date'];

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.' };

function read(root: unknown, path: string): unknown {
  let v: unknown = root;
  for (const m of path.replace(/^\{|\}$/g, '').matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[m[2] ?? m[1]!];
  }
  return v;
}

function cell(value: unknown, type: string, now: Date): TableCell {
  if (value === undefined || value === null) return null;
  if (type === 'date') return typeof value === 'string' ? timeSince(value, now) : null;
  if (type === 'integer' || type === 'number') return typeof value === 'number' ? value : null;
  if (type === 'boolean') return typeof value === 'boolean' ? value : null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The printer of one custom resource version. */
export function customPrinter(columns: readonly PrinterColumn[]): KindPrinter {
  const shown = columns.length ? columns : [AGE];
  return {
    columns: [
      col('Name', 'string', NAME_DOC, { format: 'name' }),
      ...shown.map((c) =>
        col(c.name, (TYPES.includes(c.type) ? c.type : 'string') as ColumnType, c.description ?? '', {
          ...(c.format ? { format: c.format } : {}),
          ...(c.priority ? { priority: c.priority } : {}),
        }),
      ),
    ],
    row: (o, ctx) => ({ cells: [nameOf(o), ...shown.map((c) => cell(read(o, c.jsonPath), c.type, ctx.now))] }),
  };
}
