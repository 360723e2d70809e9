// internal/printers is the public face of server-side Table rendering.
// Imports: its own modules only.

export {
  type TableResource,
  type TableOptions,
  tableFor,
  rowsFor,
  printedRows,
  columnDefinitionsFor,
  hasCustomTable,
  partialObjectMetadata,
} from './table.js';
export type {
  Table,
  TableColumnDefinition,
  TableRow,
  TableRowCondition,
  TableCell,
  TableListMeta,
  IncludeObject,
  ColumnType,
} from './table-types.js';
export { humanDuration, timeSince, rfc3339 } from './human-duration.js';
export { SCALE_TABLE } from './workload-printers.js';
