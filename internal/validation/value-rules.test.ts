import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../apierrors/field-errors.js';
import { createNaming } from '../naming/naming.js';
import type { SchemaNode } from '../schema/openapi-index.js';
import { builtinCompiler, CUSTOM_ROOT_SCHEMA, customSchemaCompiler } from './schema-compile.js';
import { validateAgainstSchema } from './schema.js';
import { compilePattern, goFloat } from './value-rules.js';

/** Errors of `spec` against a CR schema whose `spec` is `specSchema`. */
function check(specSchema: Record<string, unknown>, spec: unknown): string[] {
  const root = { type: 'object', properties: { spec: specSchema } } as SchemaNode;
  const compiler = customSchemaCompiler(root, createNaming('kubernetes'));
  return validateAgainstSchema(CUSTOM_ROOT_SCHEMA, { apiVersion: 'x/v1', kind: 'X', metadata: { name: 'n' }, spec }, { compiler }).map(formatFieldError);
}

const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });

interface Case {
  name: string;
  schema: Record<string, unknown>;
  ok: unknown[];
  bad: Array<[unknown, string[]]>;
}

const cases: Case[] = [
  {
    name: 'maxLength counts code points and is a TooLong',
    schema: obj({ name: { type: 'string', maxLength: 5 } }),
    ok: [{ name: 'abcde' }, { name: '日本語日本' }, { name: '😀😀😀😀😀' }],
    bad: [
      [{ name: 'abcdef' }, ['spec.name: Too long: may not be more than 5 bytes']],
      [{ name: '😀😀😀😀😀😀' }, ['spec.name: Too long: may not be more than 5 bytes']],
    ],
  },
  {
    name: 'maxLength of one says byte',
    schema: obj({ c: { type: 'string', maxLength: 1 } }),
    ok: [{ c: 'a' }],
    bad: [[{ c: 'ab' }, ['spec.c: Too long: may not be more than 1 byte']]],
  },
  {
    name: 'minLength',
    schema: obj({ name: { type: 'string', minLength: 2 } }),
    ok: [{ name: 'ab' }, {}],
    bad: [[{ name: 'a' }, ['spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long']]],
  },
  {
    name: 'pattern is an unanchored RE2 search',
    schema: obj({ p: { type: 'string', pattern: '^a$' }, q: { type: 'string', pattern: '[0-9]' } }),
    ok: [{ p: 'a', q: 'x1y' }],
    bad: [
      [{ p: 'b' }, [`spec.p: Invalid value: "b": spec.p in body should match '^a$'`]],
      // Go's $ without (?m) matches at the very end only.
      [{ p: 'a\n', q: 'xyz' }, [`spec.p: Invalid value: "a\\n": spec.p in body should match '^a$'`, `spec.q: Invalid value: "xyz": spec.q in body should match '[0-9]'`]],
    ],
  },
  {
    name: 'string checks stop at the first failure, as kube-openapi',
    schema: obj({ s: { type: 'string', maxLength: 3, pattern: '^a+$' } }),
    ok: [{ s: 'aaa' }],
    bad: [[{ s: 'bbbb' }, ['spec.s: Too long: may not be more than 3 bytes']]],
  },
  {
    name: 'minimum and maximum, inclusive and exclusive',
    schema: obj({
      i: { type: 'integer', minimum: 1, maximum: 10 },
      x: { type: 'integer', minimum: 1, exclusiveMinimum: true, maximum: 10, exclusiveMaximum: true },
      f: { type: 'number', maximum: 1.5 },
    }),
    ok: [{ i: 1, x: 2, f: 1.5 }, { i: 10, x: 9, f: -3 }],
    bad: [
      [{ i: 0 }, ['spec.i: Invalid value: 0: spec.i in body should be greater than or equal to 1']],
      [{ i: 11 }, ['spec.i: Invalid value: 11: spec.i in body should be less than or equal to 10']],
      [{ x: 1 }, ['spec.x: Invalid value: 1: spec.x in body should be greater than 1']],
      [{ x: 10 }, ['spec.x: Invalid value: 10: spec.x in body should be less than 10']],
      [{ f: 1.75 }, ['spec.f: Invalid value: 1.75: spec.f in body should be less than or equal to 1.5']],
    ],
  },
  {
    name: 'float bounds print as Go %v',
    schema: obj({ f: { type: 'number', maximum: 1000000 } }),
    ok: [{ f: 1000000 }],
    bad: [[{ f: 1000000.5 }, ['spec.f: Invalid value: 1000000.5: spec.f in body should be less than or equal to 1e+06']]],
  },
  {
    name: 'multipleOf, integer and fractional',
    schema: obj({ i: { type: 'integer', multipleOf: 5 }, f: { type: 'number', multipleOf: 0.1 } }),
    ok: [{ i: 15, f: 0.3 }, { i: 0, f: 2 }],
    bad: [
      [{ i: 7 }, ['spec.i: Invalid value: 7: spec.i in body should be a multiple of 5']],
      [{ f: 0.25 }, ['spec.f: Invalid value: 0.25: spec.f in body should be a multiple of 0.1']],
    ],
  },
  {
    name: 'minItems is Invalid, maxItems is TooMany',
    schema: obj({ l: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 3 } }),
    ok: [{ l: ['a', 'b'] }, { l: ['a', 'b', 'c'] }],
    bad: [
      [{ l: ['a'] }, ['spec.l: Invalid value: 1: spec.l in body should have at least 2 items']],
      [{ l: ['a', 'b', 'c', 'd'] }, ['spec.l: Too many: 4: must have at most 3 items']],
    ],
  },
  {
    name: 'uniqueItems compares values deeply',
    schema: obj({ l: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, uniqueItems: true } }),
    ok: [{ l: [{ a: 1 }, { a: 2 }] }],
    bad: [[{ l: [{ a: 1, b: 2 }, { b: 2, a: 1 }] }, [`spec.l: Invalid value: "": spec.l in body shouldn't contain duplicates`]]],
  },
  {
    name: 'minProperties and maxProperties; a count failure hides the fields',
    schema: obj({ m: { type: 'object', additionalProperties: { type: 'string', maxLength: 1 }, minProperties: 1, maxProperties: 2 } }),
    ok: [{ m: { a: 'x' } }],
    bad: [
      [{ m: {} }, ['spec.m: Invalid value: 0: spec.m in body should have at least 1 properties']],
      [{ m: { a: 'toolong', b: 'x', c: 'y' } }, ['spec.m: Too many: 3: must have at most 2 items']],
      [{ m: { a: 'toolong' } }, ['spec.m[a]: Too long: may not be more than 1 byte']],
    ],
  },
  {
    name: 'nested paths and array items',
    schema: obj({
      items: { type: 'array', items: obj({ name: { type: 'string', maxLength: 2 }, port: { type: 'integer', maximum: 100 } }) },
    }),
    ok: [{ items: [{ name: 'ab', port: 100 }] }],
    bad: [
      [
        { items: [{ name: 'ok', port: 1 }, { name: 'abc', port: 101 }] },
        ['spec.items[1].name: Too long: may not be more than 2 bytes', 'spec.items[1].port: Invalid value: 101: spec.items[1].port in body should be less than or equal to 100'],
      ],
    ],
  },
  {
    name: 'anyOf reports the junctor at <nil> and the closest alternative',
    schema: obj({ a: { type: 'string' }, b: { type: 'string' } }, { anyOf: [{ required: ['a'] }, { required: ['b'] }] }),
    ok: [{ a: 'x' }, { b: 'y' }],
    bad: [[{}, ['<nil>: Invalid value: "": "spec" must validate at least one schema (anyOf)', 'spec.a: Required value']]],
  },
  {
    name: 'oneOf: none or several valid',
    schema: obj({ v: { type: 'integer', oneOf: [{ minimum: 10 }, { maximum: 0 }, { multipleOf: 7 }] } }),
    ok: [{ v: 12 }, { v: -1 }, { v: 7 }],
    bad: [
      [{ v: 14 }, ['<nil>: Invalid value: "": "spec.v" must validate one and only one schema (oneOf). Found 2 valid alternatives']],
      [
        { v: 5 },
        ['<nil>: Invalid value: "": "spec.v" must validate one and only one schema (oneOf). Found none valid', 'spec.v: Invalid value: 5: spec.v in body should be greater than or equal to 10'],
      ],
    ],
  },
  {
    name: 'allOf merges every failing alternative',
    schema: obj({ s: { type: 'string', allOf: [{ maxLength: 3 }, { pattern: '^x' }] } }),
    ok: [{ s: 'xab' }],
    bad: [
      [{ s: 'xabc' }, ['spec.s: Too long: may not be more than 3 bytes', '<nil>: Invalid value: "": "spec.s" must validate all the schemas (allOf)']],
      [
        { s: 'abcd' },
        [
          'spec.s: Too long: may not be more than 3 bytes',
          `spec.s: Invalid value: "abcd": spec.s in body should match '^x'`,
          '<nil>: Invalid value: "": "spec.s" must validate all the schemas (allOf). None validated',
        ],
      ],
    ],
  },
  {
    name: 'not, with nested properties and enum',
    schema: obj({ mode: { type: 'string' } }, { not: { properties: { mode: { enum: ['off'] } } } }),
    ok: [{ mode: 'on' }],
    bad: [
      [{ mode: 'off' }, ['<nil>: Invalid value: "": "spec" must not validate the schema (not)']],
      // An absent property satisfies the negated schema, so the object fails `not`.
      [{}, ['<nil>: Invalid value: "": "spec" must not validate the schema (not)']],
    ],
  },
  {
    name: 'nullable: false refuses null properties, items and map values; nullable accepts them',
    schema: obj({
      s: { type: 'string' },
      n: { type: 'string', nullable: true },
      l: { type: 'array', items: { type: 'string' } },
      ln: { type: 'array', items: { type: 'string', nullable: true } },
      m: { type: 'object', additionalProperties: { type: 'integer' } },
      free: { type: 'array', items: { 'x-kubernetes-preserve-unknown-fields': true } },
    }),
    ok: [{ n: null, ln: ['a', null], free: [null, 1] }],
    bad: [
      [
        { s: null, l: ['a', null], m: { k: null } },
        [
          'spec.s: Invalid value: "null": spec.s in body must be of type string: "null"',
          'spec.l[1]: Invalid value: "null": spec.l[1] in body must be of type string: "null"',
          'spec.m[k]: Invalid value: "null": spec.m[k] in body must be of type integer: "null"',
        ],
      ],
    ],
  },
  {
    name: 'list-type set and map uniqueness',
    schema: obj({
      set: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
      map: {
        type: 'array',
        items: obj({ name: { type: 'string' }, v: { type: 'integer' } }, { required: ['name'] }),
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      },
    }),
    ok: [{ set: ['a', 'b'], map: [{ name: 'a', v: 1 }, { name: 'b', v: 1 }] }],
    bad: [
      [
        { set: ['a', 'b', 'a'], map: [{ name: 'a', v: 1 }, { name: 'a', v: 2 }] },
        ['spec.set[2]: Duplicate value: "a"', 'spec.map[1]: Duplicate value: {"name":"a"}'],
      ],
    ],
  },
];

describe('custom resource value validations', () => {
  for (const c of cases) {
    it(c.name, () => {
      for (const v of c.ok) expect(check(c.schema, v), JSON.stringify(v)).toEqual([]);
      for (const [v, want] of c.bad) expect(check(c.schema, v).sort(), JSON.stringify(v)).toEqual([...want].sort());
    });
  }

  it('the cluster naming reads list-type markers in its own spelling', () => {
    const root = { type: 'object', properties: { spec: obj({ set: { type: 'array', items: { type: 'string' }, 'x-cluster-list-type': 'set' } }) } } as SchemaNode;
    const compiler = customSchemaCompiler(root, createNaming('cluster'));
    const errs = validateAgainstSchema(CUSTOM_ROOT_SCHEMA, { spec: { set: ['a', 'a'] } }, { compiler }).map(formatFieldError);
    expect(errs).toEqual(['spec.set[1]: Duplicate value: "a"']);
  });

  it('evaluates a catastrophic-backtracking pattern in linear time', () => {
    const schema = obj({ s: { type: 'string', pattern: '^(a+)+$' }, t: { type: 'string', pattern: '^(a|a)*$' } });
    const hostile = `${'a'.repeat(50_000)}!`;
    const start = performance.now();
    const errs = check(schema, { s: hostile, t: hostile });
    expect(performance.now() - start).toBeLessThan(2000);
    expect(errs).toHaveLength(2);
  });

  it('leaves built-in schemas without rules', () => {
    const node = builtinCompiler().named('io.k8s.api.core.v1.Pod');
    expect(node && 'rules' in node ? node.rules : undefined).toBeUndefined();
  });
});

describe('compilePattern', () => {
  it.each([
    ['^[a-z]+$', null],
    ['\\p{L}+', null],
    ['(?i)abc', null],
    ['+', 'error parsing regexp: missing argument to repetition operator: `+`'],
    ['[', 'error parsing regexp: missing closing ]: `[`'],
    ['(?=a)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
    ['(a)\\1', 'error parsing regexp: invalid escape sequence: `\\1`'],
  ])('%s', (source, error) => {
    const c = compilePattern(source);
    if (error === null) expect(c).not.toBeInstanceOf(Error);
    else expect(c instanceof Error ? c.message : c).toBe(error);
  });
});

describe('goFloat', () => {
  it.each([
    [1.5, '1.5'],
    [100000, '100000'],
    [1000000, '1e+06'],
    [1234567.5, '1.2345675e+06'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [-2.5e-7, '-2.5e-07'],
  ])('%d', (f, want) => expect(goFloat(f)).toBe(want));
});
