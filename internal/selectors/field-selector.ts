// internal/selectors/field-selector owns field selectors: the `fieldSelector` query syntax
// (`field=value`, `field==value`, `field!=value`, comma = AND, `\,` `\=` `\\` escapes in values),
// parsed as upstream does with its error texts, matching against a field set, and the canonical
// string form. Which fields a kind supports is field-sets' business.
// Imports: apierrors.

import { errors } from '../apierrors/status.js';

export interface FieldRequirement {
  readonly field: string;
  /** `=` and `==` are the same test; `==` is normalised to `=`. */
  readonly operator: '=' | '!=';
  /** Unescaped. */
  readonly value: string;
}

/** The fields of one object: field path → value. A missing field reads as `''`. */
export type FieldSet = Readonly<Record<string, string>>;

/** Upstream's EscapeValue: backslash, comma and equals sign get a backslash. */
export const escapeFieldValue = (s: string): string => s.replace(/[\\,=]/g, (c) => `\\${c}`);

/** A parsed field selector: the AND of its requirements. Immutable. */
export class FieldSelector {
  private static readonly all = new FieldSelector([]);

  constructor(readonly requirements: readonly FieldRequirement[]) {}

  static everything(): FieldSelector {
    return FieldSelector.all;
  }

  matches(fields: FieldSet): boolean {
    for (const r of this.requirements) {
      const have = Object.prototype.hasOwnProperty.call(fields, r.field) ? fields[r.field]! : '';
      if ((have === r.value) !== (r.operator === '=')) return false;
    }
    return true;
  }

  isEmpty(): boolean {
    return this.requirements.length === 0;
  }

  /** The value `field` must have, when an `=` term pins it (for indexes such as `spec.nodeName`). */
  requiresExactMatch(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && r.operator === '=')?.value;
  }

  /**
   * Rewrites each requirement's field name (and maybe value); a function that throws aborts.
   * Used for per-kind label conversion (`spec.host` → `spec.nodeName`).
   */
  transform(fn: (field: string, value: string) => { field: string; value: string }): FieldSelector {
    const out: FieldRequirement[] = [];
    for (const r of this.requirements) {
      const t = fn(r.field, r.value);
      // Upstream drops a term both of whose sides were rewritten to empty.
      if (t.field === '' && t.value === '') continue;
      out.push({ field: t.field, operator: r.operator, value: t.value });
    }
    return new FieldSelector(out);
  }

  /** Canonical form: `field=value` / `field!=value` joined by `,`, values escaped. */
  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`).join(',');
  }
}

/** Splits on commas that are not escaped; backslashes stay in the pieces. */
function splitTerms(text: string): string[] {
  if (text.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (escaped) escaped = false;
    else if (c === '\\') escaped = true;
    else if (c === ',') {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

const TERM_OPERATORS = ['!=', '==', '='] as const;

/** The first operator occurrence splits the term; no escaping on the left-hand side. */
function splitTerm(term: string): { lhs: string; op: (typeof TERM_OPERATORS)[number]; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of TERM_OPERATORS) {
      if (term.startsWith(op, i)) return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

class FieldParseError extends Error {}

/** Upstream's UnescapeValue; its error for a bare `,`/`=` prints the character's code point. */
function unescapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let escaped = false;
  for (const c of s) {
    if (escaped) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw new FieldParseError(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      out += c;
      escaped = false;
      continue;
    }
    if (c === '\\') escaped = true;
    else if (c === ',' || c === '=') {
      throw new FieldParseError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else out += c;
  }
  if (escaped) throw new FieldParseError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Parses without throwing: the selector, or upstream's error message. */
export function tryParseFieldSelector(text: string): { selector: FieldSelector } | { error: string } {
  // Upstream sorts the raw terms before parsing, which fixes the canonical order.
  const parts = splitTerms(text).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const reqs: FieldRequirement[] = [];
  try {
    for (const part of parts) {
      if (part === '') continue;
      const t = splitTerm(part);
      if (!t) throw new FieldParseError(`invalid selector: '${text}'; can't understand '${part}'`);
      reqs.push({ field: t.lhs, operator: t.op === '!=' ? '!=' : '=', value: unescapeValue(t.rhs) });
    }
  } catch (e) {
    if (e instanceof FieldParseError) return { error: e.message };
    throw e;
  }
  return { selector: reqs.length === 0 ? FieldSelector.everything() : new FieldSelector(reqs) };
}

/**
 * Parses a `fieldSelector` query value. Throws a 400 BadRequest StatusError with upstream's
 * message (`invalid selector: 'x'; can't understand 'x'`). `''` is everything. Field names are
 * not checked here: see validateFieldSelector in field-sets.
 */
export function parseFieldSelector(text: string): FieldSelector {
  const result = tryParseFieldSelector(text);
  if ('error' in result) throw errors.badRequest(result.error);
  return result.selector;
}

/** matches() as a free function, for callers holding a selector and a field set. */
export const matchesFields = (selector: FieldSelector, fields: FieldSet): boolean => selector.matches(fields);
