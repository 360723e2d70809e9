// internal/selectors/label-selector owns label selectors: the query-string syntax of
// `labelSelector` (parsed exactly as upstream's lexer and parser do, with the same error texts),
// matching against an object's labels, the canonical string form, and the structured selector
// objects carry (`{matchLabels, matchExpressions}`) with their validation.
// Imports: label-syntax, apierrors.

import { errors } from '../apierrors/status.js';
import { type FieldError, fieldErrors, fieldPath, quoteValue } from '../apierrors/field-errors.js';
import { labelKeyErrors, labelValueErrors } from './label-syntax.js';

/** Operators as upstream spells them (`selection.Operator`). */
export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** Sorted and de-duplicated for parsed selectors; exactly one for `=`, `==`, `!=`, `gt`, `lt`; none for `exists` and `!`. */
  readonly values: readonly string[];
}

export type Labels = Readonly<Record<string, string>> | undefined | null;

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** Go's strconv.ParseInt(s, 10, 64) as a BigInt, or undefined when it would fail. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  if (v > 9223372036854775807n || v < -9223372036854775808n) return undefined;
  return v;
}

export function requirementMatches(r: LabelRequirement, labels: Labels): boolean {
  const set = labels ?? {};
  const present = hasOwn(set, r.key);
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return present && r.values.includes(set[r.key]!);
    case 'notin':
    case '!=':
      return !present || !r.values.includes(set[r.key]!);
    case 'exists':
      return present;
    case '!':
      return !present;
    case 'gt':
    case 'lt': {
      if (!present || r.values.length !== 1) return false;
      const have = parseInt64(set[r.key]!);
      const want = parseInt64(r.values[0]!);
      if (have === undefined || want === undefined) return false;
      return r.operator === 'gt' ? have > want : have < want;
    }
  }
}

/** Upstream's Requirement.String(): `!k`, `k`, `k=v`, `k in (a,b)`, `k>3`; multiple values sorted. */
export function requirementString(r: LabelRequirement): string {
  let out = r.operator === '!' ? `!${r.key}` : r.key;
  switch (r.operator) {
    case 'exists':
    case '!':
      return out;
    case 'in':
      out += ' in ';
      break;
    case 'notin':
      out += ' notin ';
      break;
    case 'gt':
      out += '>';
      break;
    case 'lt':
      out += '<';
      break;
    default:
      out += r.operator;
  }
  const values = r.values.length === 1 ? r.values[0]! : [...r.values].sort(compareStrings).join(',');
  return r.operator === 'in' || r.operator === 'notin' ? `${out}(${values})` : out + values;
}

/** Byte-wise order, as Go sorts strings (UTF-16 order differs only outside the BMP). */
const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A parsed label selector: the AND of its requirements. Immutable. `everything()` matches all
 * label sets and is empty; `nothing()` matches none and is not empty (a nil structured selector).
 */
export class LabelSelector {
  private static readonly all = new LabelSelector([], false);
  private static readonly none = new LabelSelector([], true);

  private constructor(
    readonly requirements: readonly LabelRequirement[],
    private readonly selectsNothing: boolean,
  ) {}

  static everything(): LabelSelector {
    return LabelSelector.all;
  }

  static nothing(): LabelSelector {
    return LabelSelector.none;
  }

  /** Requirements are sorted by key (stable), as upstream's parser leaves them. */
  static of(requirements: readonly LabelRequirement[]): LabelSelector {
    if (requirements.length === 0) return LabelSelector.all;
    return new LabelSelector([...requirements].sort((a, b) => compareStrings(a.key, b.key)), false);
  }

  matches(labels: Labels): boolean {
    if (this.selectsNothing) return false;
    for (const r of this.requirements) if (!requirementMatches(r, labels)) return false;
    return true;
  }

  /** True when the selector does not restrict anything (empty query, `{}` structured selector). */
  isEmpty(): boolean {
    return !this.selectsNothing && this.requirements.length === 0;
  }

  /** True only for `nothing()`; contradictory requirements are not detected (neither does upstream). */
  matchesNothing(): boolean {
    return this.selectsNothing;
  }

  /** The value `key` must have for an object to match, when the selector pins one (for indexes). */
  requiresExactMatch(key: string): string | undefined {
    for (const r of this.requirements) {
      if (r.key !== key) continue;
      if ((r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1) return r.values[0];
      return undefined;
    }
    return undefined;
  }

  /** Canonical form: requirements joined by `,`, in key order. `''` for everything and nothing. */
  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
}

// ---------------------------------------------------------------------------------------------
// The query-string parser. Upstream's grammar:
//   selector    ::= requirement | requirement "," selector
//   requirement ::= [!] KEY [ set-restriction | exact-restriction ]
//   set-restriction   ::= ("in" | "notin") "(" VALUE { "," VALUE } ")"
//   exact-restriction ::= ("=" | "==" | "!=" | ">" | "<") VALUE
// Whitespace separates tokens and is otherwise ignored. Values may be empty.

const enum Tok {
  Error,
  End,
  ClosePar,
  Comma,
  Not,
  DoubleEquals,
  Equals,
  Greater,
  Identifier,
  In,
  Less,
  NotEquals,
  NotIn,
  OpenPar,
}

const TOKEN_OF: Readonly<Record<string, Tok>> = {
  ')': Tok.ClosePar,
  ',': Tok.Comma,
  '!': Tok.Not,
  '==': Tok.DoubleEquals,
  '=': Tok.Equals,
  '>': Tok.Greater,
  in: Tok.In,
  '<': Tok.Less,
  '!=': Tok.NotEquals,
  notin: Tok.NotIn,
  '(': Tok.OpenPar,
};

const isWhitespace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSpecial = (c: string): boolean =>
  c === '=' || c === '!' || c === '(' || c === ')' || c === ',' || c === '>' || c === '<';

interface Token {
  tok: Tok;
  lit: string;
}

/** Splits the text into tokens. A NUL character ends the input, as it does upstream. */
function scan(text: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  const peek = (): string => (pos < text.length ? text[pos]! : '\0');
  for (;;) {
    while (isWhitespace(peek())) pos++;
    const c = peek();
    if (c === '\0') {
      tokens.push({ tok: Tok.End, lit: '' });
      return tokens;
    }
    if (isSpecial(c)) {
      // Longest special-symbol run that is still a token: `!=` and `==` win over `!` and `=`.
      let buf = '';
      let last: Token | undefined;
      while (isSpecial(peek())) {
        buf += peek();
        const t = TOKEN_OF[buf];
        if (t !== undefined) {
          last = { tok: t, lit: buf };
          pos++;
        } else if (last) {
          break;
        } else {
          pos++;
        }
      }
      tokens.push(last ?? { tok: Tok.Error, lit: `error expected: keyword found '${buf}'` });
      continue;
    }
    let word = '';
    while (peek() !== '\0' && !isSpecial(peek()) && !isWhitespace(peek())) word += text[pos++];
    const keyword = word === 'in' || word === 'notin' ? TOKEN_OF[word]! : undefined;
    tokens.push({ tok: keyword ?? Tok.Identifier, lit: word });
  }
}

/** A parse failure with upstream's message; turned into a 400 by parseLabelSelector. */
class LabelParseError extends Error {}

const BINARY_OPERATORS = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];

/** Go's field.Error text with a nil path, as the parser reports it. */
const invalidAtNilPath = (value: string, detail: string): string => `<nil>: Invalid value: ${quoteValue(value)}: ${detail}`;

/**
 * Upstream's NewRequirement checks for parsed requirements (the key was already checked by the
 * parser). Returns the aggregated message, or undefined when valid.
 */
function requirementErrors(key: string, op: LabelOperator, values: readonly string[]): string | undefined {
  const msgs: string[] = [];
  if (op === 'gt' || op === 'lt') {
    values.forEach((v, i) => {
      if (parseInt64(v) === undefined) {
        msgs.push(`values[${i}]: Invalid value: ${quoteValue(v)}: for 'Gt', 'Lt' operators, the value must be an integer`);
      }
    });
  }
  values.forEach((v, i) => {
    const errs = labelValueErrors(v);
    if (errs.length > 0) msgs.push(`values[${i}][${key}]: Invalid value: ${quoteValue(v)}: ${errs.join('; ')}`);
  });
  const unique = [...new Set(msgs)];
  if (unique.length === 0) return undefined;
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
}

class Parser {
  private position = 0;
  constructor(private readonly items: Token[]) {}

  /** In value position the keywords `in` and `notin` are plain identifiers. */
  private asValue(t: Token): Token {
    return t.tok === Tok.In || t.tok === Tok.NotIn ? { tok: Tok.Identifier, lit: t.lit } : t;
  }
  private lookahead(values: boolean): Token {
    const t = this.items[this.position]!;
    return values ? this.asValue(t) : t;
  }
  private consume(values: boolean): Token {
    const t = this.items[this.position++]!;
    return values ? this.asValue(t) : t;
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead(true);
      if (tok === Tok.Identifier || tok === Tok.Not) {
        try {
          requirements.push(this.parseRequirement());
        } catch (e) {
          if (e instanceof LabelParseError) throw new LabelParseError(`unable to parse requirement: ${e.message}`);
          throw e;
        }
        const next = this.consume(true);
        if (next.tok === Tok.End) return requirements;
        if (next.tok === Tok.Comma) {
          const after = this.lookahead(true);
          if (after.tok !== Tok.Identifier && after.tok !== Tok.Not) {
            throw new LabelParseError(`found '${after.lit}', expected: identifier after ','`);
          }
          continue;
        }
        throw new LabelParseError(`found '${next.lit}', expected: ',' or 'end of string'`);
      }
      if (tok === Tok.End) return requirements;
      throw new LabelParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
    }
  }

  private parseRequirement(): LabelRequirement {
    const { key, operator } = this.parseKeyAndInferOperator();
    if (operator === 'exists' || operator === '!') return { key, operator, values: [] };
    const op = this.parseOperator();
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    const sorted = [...values].sort(compareStrings);
    const problem = requirementErrors(key, op, sorted);
    if (problem) throw new LabelParseError(problem);
    return { key, operator: op, values: sorted };
  }

  private parseKeyAndInferOperator(): { key: string; operator: LabelOperator | undefined } {
    let operator: LabelOperator | undefined;
    let t = this.consume(true);
    if (t.tok === Tok.Not) {
      operator = '!';
      t = this.consume(true);
    }
    if (t.tok !== Tok.Identifier) throw new LabelParseError(`found '${t.lit}', expected: identifier`);
    const keyErrs = labelKeyErrors(t.lit);
    if (keyErrs.length > 0) throw new LabelParseError(invalidAtNilPath(t.lit, keyErrs.join('; ')));
    const next = this.lookahead(true).tok;
    if ((next === Tok.End || next === Tok.Comma) && operator !== '!') operator = 'exists';
    return { key: t.lit, operator };
  }

  private parseOperator(): LabelOperator {
    const t = this.consume(false);
    switch (t.tok) {
      case Tok.In:
        return 'in';
      case Tok.Equals:
        return '=';
      case Tok.DoubleEquals:
        return '==';
      case Tok.Greater:
        return 'gt';
      case Tok.Less:
        return 'lt';
      case Tok.NotIn:
        return 'notin';
      case Tok.NotEquals:
        return '!=';
      default:
        throw new LabelParseError(`found '${t.lit}', expected: ${BINARY_OPERATORS.join(', ')}`);
    }
  }

  private parseValues(): Set<string> {
    const open = this.consume(true);
    if (open.tok !== Tok.OpenPar) throw new LabelParseError(`found '${open.lit}' expected: '('`);
    const first = this.lookahead(true);
    if (first.tok === Tok.Identifier || first.tok === Tok.Comma) {
      const values = this.parseIdentifiersList();
      // Upstream quotes the token after '(' here, not the one that is wrong; kept for parity.
      if (this.consume(true).tok !== Tok.ClosePar) throw new LabelParseError(`found '${first.lit}', expected: ')'`);
      return values;
    }
    if (first.tok === Tok.ClosePar) {
      this.consume(true);
      return new Set(['']);
    }
    throw new LabelParseError(`found '${first.lit}', expected: ',', ')' or identifier`);
  }

  /** A possibly empty list of possibly empty values: `(a,,b)`, `(,a)`, `(a,)`. */
  private parseIdentifiersList(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const t = this.consume(true);
      if (t.tok === Tok.Identifier) {
        values.add(t.lit);
        const next = this.lookahead(true);
        if (next.tok === Tok.Comma) continue;
        if (next.tok === Tok.ClosePar) return values;
        throw new LabelParseError(`found '${next.lit}', expected: ',' or ')'`);
      }
      if (t.tok === Tok.Comma) {
        if (values.size === 0) values.add('');
        const next = this.lookahead(true);
        if (next.tok === Tok.ClosePar) {
          values.add('');
          return values;
        }
        if (next.tok === Tok.Comma) values.add('');
        continue;
      }
      throw new LabelParseError(`found '${t.lit}', expected: ',', or identifier`);
    }
  }

  private parseExactValue(): Set<string> {
    const next = this.lookahead(true);
    if (next.tok === Tok.End || next.tok === Tok.Comma) return new Set(['']);
    const t = this.consume(true);
    if (t.tok === Tok.Identifier) return new Set([t.lit]);
    throw new LabelParseError(`found '${t.lit}', expected: identifier`);
  }
}

/** Parses without throwing: the selector, or upstream's error message. */
export function tryParseLabelSelector(text: string): { selector: LabelSelector } | { error: string } {
  try {
    return { selector: LabelSelector.of(new Parser(scan(text)).parse()) };
  } catch (e) {
    if (e instanceof LabelParseError) return { error: e.message };
    throw e;
  }
}

/**
 * Parses a `labelSelector` query value. Throws a 400 BadRequest StatusError whose message is
 * upstream's (`unable to parse requirement: ...`, `found ',', expected: ...`). `''` is everything.
 */
export function parseLabelSelector(text: string): LabelSelector {
  const result = tryParseLabelSelector(text);
  if ('error' in result) throw errors.badRequest(result.error);
  return result.selector;
}

// ---------------------------------------------------------------------------------------------
// Structured selectors (`metav1.LabelSelector`) as objects carry them.

/** `metav1.LabelSelector` as it appears in JSON. */
export interface LabelSelectorMeta {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] | null }> | null;
}

const META_OPERATORS: Readonly<Record<string, LabelOperator>> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Upstream's ValidateLabelSelector (invalid label values in selectors not allowed): one
 * FieldError per problem, paths under `path` (`spec.selector.matchExpressions[0].key`). Shape
 * errors (a non-object, a non-string value) are reported too, since callers may skip schema checks.
 */
export function validateLabelSelectorMeta(selector: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (selector === undefined || selector === null) return errs;
  if (!isRecord(selector)) return [fieldErrors.typeInvalid(path, selector, 'must be an object')];
  const labelsPath = fieldPath.child(path, 'matchLabels');
  const ml = selector.matchLabels;
  if (ml !== undefined && ml !== null) {
    if (!isRecord(ml)) errs.push(fieldErrors.typeInvalid(labelsPath, ml, 'must be an object of strings'));
    else {
      for (const key of Object.keys(ml).sort(compareStrings)) {
        const value = ml[key];
        for (const msg of labelKeyErrors(key)) errs.push(fieldErrors.invalid(labelsPath, key, msg));
        if (typeof value !== 'string') {
          errs.push(fieldErrors.typeInvalid(fieldPath.key(labelsPath, key), value, 'must be a string'));
          continue;
        }
        for (const msg of labelValueErrors(value)) errs.push(fieldErrors.invalid(labelsPath, value, msg));
      }
    }
  }
  const exprsPath = fieldPath.child(path, 'matchExpressions');
  const me = selector.matchExpressions;
  if (me !== undefined && me !== null) {
    if (!Array.isArray(me)) errs.push(fieldErrors.typeInvalid(exprsPath, me, 'must be an array'));
    else {
      me.forEach((expr: unknown, i) => {
        const p = fieldPath.index(exprsPath, i);
        if (!isRecord(expr)) {
          errs.push(fieldErrors.typeInvalid(p, expr, 'must be an object'));
          return;
        }
        const valuesPath = fieldPath.child(p, 'values');
        const rawValues = expr.values ?? [];
        const values = Array.isArray(rawValues) ? rawValues : undefined;
        if (!values) errs.push(fieldErrors.typeInvalid(valuesPath, rawValues, 'must be an array of strings'));
        const count = values?.length ?? 0;
        switch (expr.operator) {
          case 'In':
          case 'NotIn':
            if (count === 0) errs.push(fieldErrors.required(valuesPath, "must be specified when `operator` is 'In' or 'NotIn'"));
            break;
          case 'Exists':
          case 'DoesNotExist':
            if (count > 0) {
              errs.push(fieldErrors.forbidden(valuesPath, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
            }
            break;
          default:
            errs.push(fieldErrors.invalid(fieldPath.child(p, 'operator'), expr.operator, 'not a valid selector operator'));
        }
        const keyPath = fieldPath.child(p, 'key');
        if (typeof expr.key !== 'string') errs.push(fieldErrors.typeInvalid(keyPath, expr.key, 'must be a string'));
        else for (const msg of labelKeyErrors(expr.key)) errs.push(fieldErrors.invalid(keyPath, expr.key, msg));
        values?.forEach((v: unknown, j) => {
          const vp = fieldPath.index(valuesPath, j);
          if (typeof v !== 'string') errs.push(fieldErrors.typeInvalid(vp, v, 'must be a string'));
          else for (const msg of labelValueErrors(v)) errs.push(fieldErrors.invalid(vp, v, msg));
        });
      });
    }
  }
  return errs;
}

export type LabelSelectorMetaResult = { ok: true; selector: LabelSelector } | { ok: false; errors: FieldError[] };

/**
 * Converts a structured selector after validating it. Upstream's semantics: an absent (null)
 * selector selects nothing; `{}` selects everything; `matchLabels` become `=` requirements.
 */
export function labelSelectorFromMeta(selector: unknown, path = 'selector'): LabelSelectorMetaResult {
  const problems = validateLabelSelectorMeta(selector, path);
  if (problems.length > 0) return { ok: false, errors: problems };
  if (selector === undefined || selector === null) return { ok: true, selector: LabelSelector.nothing() };
  const s = selector as LabelSelectorMeta;
  const reqs: LabelRequirement[] = [];
  for (const key of Object.keys(s.matchLabels ?? {}).sort(compareStrings)) {
    reqs.push({ key, operator: '=', values: [s.matchLabels![key]!] });
  }
  for (const e of s.matchExpressions ?? []) {
    reqs.push({ key: e.key, operator: META_OPERATORS[e.operator]!, values: [...(e.values ?? [])] });
  }
  return { ok: true, selector: LabelSelector.of(reqs) };
}

/** Upstream's labels.FormatLabels: `a=1,b=2` in key order, `<none>` when empty. */
export function formatLabels(labels: Labels): string {
  const keys = Object.keys(labels ?? {}).sort(compareStrings);
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${labels![k]}`).join(',');
}

/** Upstream's metav1.FormatLabelSelector: canonical string, `<none>` when it selects all or nothing, `<error>` when invalid. */
export function formatLabelSelectorMeta(selector: unknown): string {
  const result = labelSelectorFromMeta(selector);
  if (!result.ok) return '<error>';
  return result.selector.toString() || '<none>';
}
