// internal/patch/go-format owns the rendering of decoded JSON values the way Go's `%v` prints
// them, because the strategic-merge-patch error messages clients see quote values that way
// (`map: map[image:nginx] does not contain declared merge key: name`).
// Imports: nothing from the project.

/** Go `%v` of a value decoded from JSON into `interface{}` (integral numbers as int64). */
export function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return goNumber(v);
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[${Object.keys(o)
      .sort()
      .map((k) => `${k}:${goValue(o[k])}`)
      .join(' ')}]`;
  }
  return String(v);
}

/** Go `%v` of a JSON number: integral values as int64, others as float64 (`1.5`, `1.2345675e+06`). */
export function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  const exp = n === 0 ? 0 : Math.floor(Math.log10(Math.abs(n)));
  if (exp < -4 || exp >= 21 || (exp >= 6 && !Number.isInteger(n))) {
    // Go writes at least two exponent digits: 1.5e+07, 1e-05.
    return n.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  }
  return String(n);
}

/** Go's reflect Kind name of a decoded JSON value, as mergepatch's argument-type errors print it. */
export function goKind(v: unknown): string {
  if (v === null || v === undefined) return 'invalid';
  if (Array.isArray(v)) return 'slice';
  switch (typeof v) {
    case 'object':
      return 'map';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(v) ? 'int64' : 'float64';
    default:
      return typeof v;
  }
}
