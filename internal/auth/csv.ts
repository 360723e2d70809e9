// internal/auth/csv owns reading CSV as Go's encoding/csv does with FieldsPerRecord = -1 (what
// upstream's token file uses): comma-separated fields, double-quoted fields that may hold
// commas, newlines and doubled quotes, blank lines skipped, and a bare or stray quote an error
// naming the line and column. Imports: nothing from the project.

export class CsvError extends Error {
  override name = 'CsvError';
  constructor(readonly line: number, readonly column: number, detail: string) {
    super(`parse error on line ${line}, column ${column}: ${detail}`);
  }
}

/** One record and the line it starts on (1-based). */
export interface CsvRecord {
  line: number;
  fields: string[];
}

export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  const s = text.replace(/\r\n/g, '\n');
  let i = 0;
  let line = 1;
  while (i < s.length) {
    // Blank lines are skipped, as encoding/csv does.
    if (s[i] === '\n') {
      i++;
      line++;
      continue;
    }
    const start = line;
    const fields: string[] = [];
    let col = 1;
    for (;;) {
      if (s[i] === '"') {
        // Quoted field.
        let value = '';
        i++;
        col++;
        for (;;) {
          if (i >= s.length) throw new CsvError(start, col, 'extraneous or missing " in quoted-field');
          const ch = s[i]!;
          if (ch === '"') {
            if (s[i + 1] === '"') {
              value += '"';
              i += 2;
              col += 2;
              continue;
            }
            i++;
            col++;
            break;
          }
          if (ch === '\n') {
            line++;
            col = 0;
          }
          value += ch;
          i++;
          col++;
        }
        fields.push(value);
        if (i < s.length && s[i] !== ',' && s[i] !== '\n') throw new CsvError(line, col, 'extraneous or missing " in quoted-field');
      } else {
        let value = '';
        while (i < s.length && s[i] !== ',' && s[i] !== '\n') {
          if (s[i] === '"') throw new CsvError(line, col, 'bare " in non-quoted-field');
          value += s[i];
          i++;
          col++;
        }
        fields.push(value);
      }
      if (i < s.length && s[i] === ',') {
        i++;
        col++;
        continue;
      }
      // End of record (newline or end of input).
      if (i < s.length) {
        i++;
        line++;
      }
      break;
    }
    records.push({ line: start, fields });
  }
  return records;
}
