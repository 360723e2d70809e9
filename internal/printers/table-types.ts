// internal/printers/table-types owns the shapes of the Table representation
// (`meta.<domain>/v1` Table, column definitions, rows, row conditions) as clients decode them.
// Imports: nothing from the project.

/** Column types as OpenAPI spells them: `string`, `integer`, `number`, `boolean`, `date`. */
export type ColumnType = 'string' | 'integer' | 'number' | 'boolean' | 'date';

export interface TableColumnDefinition {
  name: string;
  type: ColumnType;
  /** `name` for the object's name column, else `''`. */
  format: string;
  description: string;
  /** 0 = always shown; 1 = shown by `kubectl get -o wide` only. */
  priority: number;
}

export interface TableRowCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** One cell: strings, integers and booleans, as upstream's printers emit them. */
export type TableCell = string | number | boolean | null;

export interface TableRow {
  cells: TableCell[];
  conditions?: TableRowCondition[];
  /** The object, its PartialObjectMetadata, or absent, per `includeObject`. */
  object?: unknown;
}

export interface TableListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface Table {
  kind: 'Table';
  /** `meta.<domain>/v1`. */
  apiVersion: string;
  metadata: TableListMeta;
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';
