import { describe, expect, it } from 'vitest';
import { isStatusError } from '../apierrors/status.js';
import {
  formatLabels,
  formatLabelSelectorMeta,
  LabelSelector,
  labelSelectorFromMeta,
  parseLabelSelector,
  tryParseLabelSelector,
  validateLabelSelectorMeta,
} from './label-selector.js';
import { labelKeyErrors, labelValueErrors } from './label-syntax.js';

const KEY_NAME_RULE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_RULE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('label selector parsing: canonical form', () => {
  // [input, canonical string]
  const cases: Array<[string, string]> = [
    ['', ''],
    ['   ', ''],
    ['x=a', 'x=a'],
    ['x==a', 'x==a'],
    ['x!=a', 'x!=a'],
    ['x = a', 'x=a'],
    ['x\t==\n a', 'x==a'],
    ['x=', 'x='],
    ['x=,y=b', 'x=,y=b'],
    ['x in (b,a)', 'x in (a,b)'],
    ['x in (a,a,b)', 'x in (a,b)'],
    ['x notin (a)', 'x notin (a)'],
    ['x in ()', 'x in ()'],
    ['x in (,a)', 'x in (,a)'],
    ['x in (a,,b)', 'x in (,a,b)'],
    ['x in (a,)', 'x in (,a)'],
    ['x', 'x'],
    ['!x', '!x'],
    ['! x', '!x'],
    ['x>1', 'x>1'],
    ['x<10', 'x<10'],
    ['z=1,a=2,m', 'a=2,m,z=1'],
    ['b=1,a=2,b!=3', 'a=2,b=1,b!=3'],
    ['in=a', 'in=a'],
    ['x=in', 'x=in'],
    ['x in (in,notin)', 'x in (in,notin)'],
    ['example.com/app=web', 'example.com/app=web'],
    ['a.b-c_d=E.f-G_h', 'a.b-c_d=E.f-G_h'],
    ['x in (a),y', 'x in (a),y'],
    ['  x  in  ( a , b )  ,  !y  ', 'x in (a,b),!y'],
    ['x in(a)', 'x in (a)'],
    ['x notin(a),y!=b', 'x notin (a),y!=b'],
    ['x=a\u0000garbage', 'x=a'],
  ];
  it.each(cases)('%j → %j', (input, canonical) => {
    expect(parseLabelSelector(input).toString()).toBe(canonical);
  });
});

describe('label selector parsing: errors carry upstream messages', () => {
  const cases: Array<[string, string]> = [
    ['x=a,', "found '', expected: identifier after ','"],
    [',x', "found ',', expected: !, identifier, or 'end of string'"],
    ['x y', "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt"],
    ['x=a=b', "found '=', expected: ',' or 'end of string'"],
    ['!x=a', "found '=', expected: ',' or 'end of string'"],
    ['x in a', "unable to parse requirement: found 'a' expected: '('"],
    ['x in (a', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['x in (a b)', "unable to parse requirement: found 'b', expected: ',' or ')'"],
    ['x in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['x not in (a)', "unable to parse requirement: found 'not', expected: in, notin, =, ==, !=, gt, lt"],
    ['x=a b', "found 'b', expected: ',' or 'end of string'"],
    ['x=(a)', "unable to parse requirement: found '(', expected: identifier"],
    ['x (a)', "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['!!x', "unable to parse requirement: found '!', expected: identifier"],
    ['x>a', "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer"],
    [
      'x<99999999999999999999',
      "unable to parse requirement: values[0]: Invalid value: \"99999999999999999999\": for 'Gt', 'Lt' operators, the value must be an integer",
    ],
    ['app:monolith', `unable to parse requirement: <nil>: Invalid value: "app:monolith": name part ${KEY_NAME_RULE}`],
    [
      'app.kubernetes_io/name=x',
      'unable to parse requirement: <nil>: Invalid value: "app.kubernetes_io/name": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
    ],
    ['x=-bad', `unable to parse requirement: values[0][x]: Invalid value: "-bad": ${VALUE_RULE}`],
    ['x in (ok,bad-)', `unable to parse requirement: values[0][x]: Invalid value: "bad-": ${VALUE_RULE}`],
    [
      'x>-1',
      `unable to parse requirement: values[0][x]: Invalid value: "-1": ${VALUE_RULE}`,
    ],
  ];
  it.each(cases)('%j', (input, message) => {
    const r = tryParseLabelSelector(input);
    expect(r).toEqual({ error: message });
  });

  it('throws a 400 BadRequest StatusError', () => {
    try {
      parseLabelSelector('x in a');
      expect.unreachable();
    } catch (e) {
      expect(isStatusError(e)).toBe(true);
      if (isStatusError(e)) {
        expect(e.code).toBe(400);
        expect(e.reason).toBe('BadRequest');
        expect(e.status.message).toBe("unable to parse requirement: found 'a' expected: '('");
      }
    }
  });

  it('aggregates several value problems as [a, b]', () => {
    const long = 'a'.repeat(64);
    const r = tryParseLabelSelector(`x in (${long},-b)`);
    expect(r).toEqual({
      error:
        `unable to parse requirement: [values[0][x]: Invalid value: "-b": ${VALUE_RULE}, ` +
        `values[1][x]: Invalid value: "${long}": must be no more than 63 characters]`,
    });
  });
});

describe('label selector matching', () => {
  const labels = { app: 'web', tier: 'front', n: '5', empty: '' };
  // [selector, matches labels above]
  const cases: Array<[string, boolean]> = [
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app=db', false],
    ['missing=x', false],
    ['app!=db', true],
    ['app!=web', false],
    ['missing!=x', true],
    ['app in (web,db)', true],
    ['app in (db)', false],
    ['missing in (x)', false],
    ['app notin (db)', true],
    ['app notin (web)', false],
    ['missing notin (x)', true],
    ['app', true],
    ['missing', false],
    ['!missing', true],
    ['!app', false],
    ['n>4', true],
    ['n>5', false],
    ['n<6', true],
    ['n<5', false],
    ['app>1', false],
    ['missing>1', false],
    ['empty=', true],
    ['empty', true],
    ['app=web,tier=front', true],
    ['app=web,tier=back', false],
    ['app,!missing,tier in (front)', true],
  ];
  it.each(cases)('%j → %s', (sel, expected) => {
    expect(parseLabelSelector(sel).matches(labels)).toBe(expected);
  });

  it('treats absent labels as an empty set', () => {
    expect(parseLabelSelector('!a').matches(undefined)).toBe(true);
    expect(parseLabelSelector('a').matches(null)).toBe(false);
  });

  it('does not match inherited object properties', () => {
    expect(parseLabelSelector('constructor').matches({})).toBe(false);
    expect(parseLabelSelector('!toString').matches({})).toBe(true);
  });
});

describe('empty, everything and nothing', () => {
  it('distinguishes everything from nothing', () => {
    expect(LabelSelector.everything().isEmpty()).toBe(true);
    expect(LabelSelector.everything().matches({ a: 'b' })).toBe(true);
    expect(LabelSelector.nothing().isEmpty()).toBe(false);
    expect(LabelSelector.nothing().matchesNothing()).toBe(true);
    expect(LabelSelector.nothing().matches({})).toBe(false);
    expect(parseLabelSelector('a').isEmpty()).toBe(false);
  });

  it('reports exact-match requirements for indexes', () => {
    expect(parseLabelSelector('a=1,b').requiresExactMatch('a')).toBe('1');
    expect(parseLabelSelector('a in (1)').requiresExactMatch('a')).toBe('1');
    expect(parseLabelSelector('a in (1,2)').requiresExactMatch('a')).toBeUndefined();
    expect(parseLabelSelector('a!=1').requiresExactMatch('a')).toBeUndefined();
  });
});

describe('label key and value syntax', () => {
  it.each([
    ['a', []],
    ['A.b_c-D', []],
    ['example.com/a', []],
    ['', ['name part must be non-empty', `name part ${KEY_NAME_RULE}`]],
    ['/a', ['prefix part must be non-empty']],
    ['a/', ['name part must be non-empty', `name part ${KEY_NAME_RULE}`]],
    ['a'.repeat(64), ['name part must be no more than 63 characters']],
    [`${'a'.repeat(254)}/b`, ['prefix part must be no more than 253 characters']],
    [
      'a/b/c',
      [
        `a valid label key ${KEY_NAME_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
      ],
    ],
  ] as Array<[string, string[]]>)('key %j', (key, msgs) => {
    expect(labelKeyErrors(key)).toEqual(msgs);
  });

  it.each([
    ['', []],
    ['a', []],
    ['a.b_c-D9', []],
    ['a'.repeat(63), []],
    ['a'.repeat(64), ['must be no more than 63 characters']],
    ['_a', [VALUE_RULE]],
    ['a b', [VALUE_RULE]],
  ] as Array<[string, string[]]>)('value %j', (value, msgs) => {
    expect(labelValueErrors(value)).toEqual(msgs);
  });
});

describe('structured selectors (metav1.LabelSelector)', () => {
  it('converts matchLabels and matchExpressions', () => {
    const r = labelSelectorFromMeta({
      matchLabels: { b: '2', a: '1' },
      matchExpressions: [
        { key: 'c', operator: 'In', values: ['y', 'x'] },
        { key: 'd', operator: 'NotIn', values: ['z'] },
        { key: 'e', operator: 'Exists' },
        { key: 'f', operator: 'DoesNotExist', values: [] },
      ],
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.selector.toString()).toBe('a=1,b=2,c in (x,y),d notin (z),e,!f');
    expect(r.selector.matches({ a: '1', b: '2', c: 'x', e: '' })).toBe(true);
    expect(r.selector.matches({ a: '1', b: '2', c: 'x', e: '', f: '' })).toBe(false);
  });

  it('null selects nothing, {} selects everything', () => {
    const none = labelSelectorFromMeta(null);
    const all = labelSelectorFromMeta({});
    expect(none.ok && none.selector.matchesNothing()).toBe(true);
    expect(all.ok && all.selector.isEmpty()).toBe(true);
  });

  it('reports every problem as a field error', () => {
    const errs = validateLabelSelectorMeta(
      {
        matchLabels: { 'bad key': 'ok', good: '-bad' },
        matchExpressions: [
          { key: 'a', operator: 'In', values: [] },
          { key: 'b', operator: 'Exists', values: ['x'] },
          { key: 'c', operator: 'Equals', values: ['x'] },
          { key: 'd/e/f', operator: 'In', values: ['ok', 'no good'] },
        ],
      },
      'spec.selector',
    );
    expect(errs.map((e) => [e.type, e.field, e.detail?.slice(0, 40)])).toEqual([
      ['FieldValueInvalid', 'spec.selector.matchLabels', `name part ${KEY_NAME_RULE}`.slice(0, 40)],
      ['FieldValueInvalid', 'spec.selector.matchLabels', VALUE_RULE.slice(0, 40)],
      ['FieldValueRequired', 'spec.selector.matchExpressions[0].values', "must be specified when `operator` is 'In"],
      ['FieldValueForbidden', 'spec.selector.matchExpressions[1].values', "may not be specified when `operator` is "],
      ['FieldValueInvalid', 'spec.selector.matchExpressions[2].operator', 'not a valid selector operator'],
      ['FieldValueInvalid', 'spec.selector.matchExpressions[3].key', 'a valid label key must consist of alphan'],
      ['FieldValueInvalid', 'spec.selector.matchExpressions[3].values[1]', VALUE_RULE.slice(0, 40)],
    ]);
    const r = labelSelectorFromMeta({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }, 'spec.selector');
    expect(r.ok).toBe(false);
  });

  it('rejects malformed shapes without throwing', () => {
    expect(validateLabelSelectorMeta('x', 's')[0]?.type).toBe('FieldValueTypeInvalid');
    expect(validateLabelSelectorMeta({ matchLabels: { a: 1 } }, 's')[0]?.field).toBe('s.matchLabels[a]');
    expect(validateLabelSelectorMeta({ matchExpressions: [{ key: 'a', operator: 'In', values: 'x' }] }, 's')[0]?.field).toBe(
      's.matchExpressions[0].values',
    );
  });

  it('formats as upstream printers do', () => {
    expect(formatLabelSelectorMeta({ matchLabels: { app: 'x' } })).toBe('app=x');
    expect(formatLabelSelectorMeta({})).toBe('<none>');
    expect(formatLabelSelectorMeta(undefined)).toBe('<none>');
    expect(formatLabelSelectorMeta({ matchExpressions: [{ key: 'a', operator: 'Bogus' }] })).toBe('<error>');
    expect(formatLabels({ b: '2', a: '1' })).toBe('a=1,b=2');
    expect(formatLabels({})).toBe('<none>');
    expect(formatLabels(undefined)).toBe('<none>');
  });
});
