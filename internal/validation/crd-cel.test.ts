import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../apierrors/field-errors.js';
import { createNaming } from '../naming/naming.js';
import { compileCrdRules, newBudget, ratchetSchemaErrors, validateCrdRules } from './crd-cel.js';
import type { JsonObject } from './plain-json.js';

const kube = createNaming('kubernetes');

const schema = (ext = 'x-kubernetes-'): JsonObject => ({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      [`${ext}validations`]: [
        { rule: 'self.minReplicas <= self.maxReplicas', message: 'minReplicas must not exceed maxReplicas' },
        { rule: "self.name.startsWith('app-')", messageExpression: "'name ' + self.name + ' must start with app-'", fieldPath: '.name', reason: 'FieldValueForbidden' },
        { rule: 'self.mode == oldSelf.mode', message: 'mode is immutable' },
        { rule: '!oldSelf.hasValue() || self.size >= oldSelf.value().size', message: 'size may not shrink', optionalOldSelf: true },
        { rule: 'has(self.owner)', reason: 'FieldValueRequired', message: 'owner is required' },
      ],
      properties: {
        name: { type: 'string', maxLength: 64 },
        mode: { type: 'string', maxLength: 16 },
        owner: { type: 'string', maxLength: 16 },
        size: { type: 'integer' },
        minReplicas: { type: 'integer' },
        maxReplicas: { type: 'integer' },
        tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 32 }, [`${ext}validations`]: [{ rule: 'self.all(t, t.matches("^[a-z]+$"))', message: 'tags are lowercase words' }] },
      },
    },
  },
});

const good = { spec: { name: 'app-a', mode: 'fast', owner: 'me', size: 2, minReplicas: 1, maxReplicas: 3, tags: ['a'] } };
const errorsOf = (obj: unknown, old?: unknown, ext = 'x-kubernetes-') => {
  const { root, errors } = compileCrdRules(schema(ext), createNaming(ext === 'x-kubernetes-' ? 'kubernetes' : 'cluster'), 's');
  expect(errors).toEqual([]);
  return validateCrdRules(root!, obj, old, '', newBudget(), ext).map(formatFieldError);
};
const withSpec = (over: Record<string, unknown>) => ({ spec: { ...good.spec, ...over } });

describe('CRD validation rules: evaluation', () => {
  it('passes a valid object on create, and skips transition rules there (optionalOldSelf ones run)', () => {
    expect(errorsOf(good)).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['message', { minReplicas: 5 }, 'spec: Invalid value: "object": minReplicas must not exceed maxReplicas'],
    ['messageExpression, fieldPath and reason Forbidden', { name: 'x' }, 'spec.name: Forbidden: name x must start with app-'],
    ['reason Required', { owner: undefined }, 'spec: Required value: owner is required'],
    ['a rule on list items', { tags: ['a', 'B1'] }, 'spec.tags: Invalid value: "array": tags are lowercase words'],
  ])('reports %s in upstream wording', (_what, over, want) => {
    expect(errorsOf(withSpec(over))).toEqual([want]);
  });

  it('reports the default message and evaluation errors as upstream', () => {
    const { root } = compileCrdRules({ type: 'object', properties: { a: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.x > 0' }, { rule: 'self.m["k"] == 1' }], properties: { x: { type: 'integer' }, m: { type: 'object', additionalProperties: { type: 'integer' } } } } } }, kube, 's');
    expect(validateCrdRules(root!, { a: { x: 0, m: {} } }, undefined, '', newBudget()).map(formatFieldError)).toEqual([
      'a: Invalid value: "object": failed rule: self.x > 0',
      expect.stringMatching(/^a: Invalid value: "object": .*evaluating rule: self.m\["k"\] == 1$/),
    ]);
  });

  it('runs transition rules on update, with oldSelf', () => {
    expect(errorsOf(withSpec({ mode: 'slow' }), good)).toEqual(['spec: Invalid value: "object": mode is immutable']);
    expect(errorsOf(withSpec({ size: 1 }), good)).toEqual(['spec: Invalid value: "object": size may not shrink']);
    expect(errorsOf(withSpec({ size: 5 }), good)).toEqual([]);
  });

  it('ratchets: an unchanged value that fails a rule does not fail the update; a changed one does', () => {
    const bad = withSpec({ tags: ['B1'] });
    expect(errorsOf(bad, bad)).toEqual([]);
    expect(errorsOf(withSpec({ tags: ['B1'], size: 3 }), bad)).toEqual([]);
    expect(errorsOf(withSpec({ tags: ['B2'] }), bad)).toEqual(['spec.tags: Invalid value: "array": tags are lowercase words']);
  });

  it('ratchets schema errors of unchanged values', () => {
    const errs = [
      { type: 'FieldValueInvalid' as const, field: 'spec.tags[0]', value: 'B', detail: 'x' },
      { type: 'FieldValueRequired' as const, field: 'spec.owner', detail: '' },
      { type: 'FieldValueInvalid' as const, field: 'spec.size', value: 9, detail: 'x' },
    ];
    const old = { spec: { tags: ['B'], size: 1 } };
    expect(ratchetSchemaErrors(errs, { spec: { tags: ['B'], size: 9 } }, old).map((e) => e.field)).toEqual(['spec.owner', 'spec.size']);
    expect(ratchetSchemaErrors(errs, { spec: { tags: ['B'], size: 1 } }, old).map((e) => e.field)).toEqual([]);
  });

  it('spells the extension x-cluster-validations under --naming=cluster', () => {
    expect(errorsOf(withSpec({ minReplicas: 5 }), undefined, 'x-cluster-')).toEqual(['spec: Invalid value: "object": minReplicas must not exceed maxReplicas']);
  });

  it('stops when the per-request budget runs out', () => {
    const { root } = compileCrdRules({ type: 'object', properties: { l: { type: 'array', maxItems: 1500, items: { type: 'integer' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x >= 0))' }] } } }, kube, 's');
    const errs = validateCrdRules(root!, { l: Array.from({ length: 1200 }, (_, i) => i) }, undefined, '', newBudget()).map(formatFieldError);
    expect(errs).toEqual(["l: Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.all(y, x >= 0))"]);
    const small = validateCrdRules(root!, { l: [1, 2] }, undefined, '', { remaining: 3 }).map(formatFieldError);
    expect(small).toEqual(['l: Invalid value: "array": validation failed due to running out of cost budget, no further validation rules will be run']);
  });
});

describe('CRD validation rules: at CRD creation', () => {
  const one = (node: JsonObject) => compileCrdRules({ type: 'object', properties: { f: node } }, kube, 'v').errors.map(formatFieldError);

  it.each<[string, JsonObject, RegExp]>([
    ['a compile error', { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.nope(' }] }, /^v\.properties\[f\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: apiextensions\.ValidationRule\{Rule:"self\.nope\(".*\}: compilation failed: /],
    ['a type error', { type: 'integer', 'x-kubernetes-validations': [{ rule: "self + 'a' == 'b'" }] }, /rule: Invalid value: .*compilation failed: .*no such overload/],
    ['a non-boolean rule', { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self + 1' }] }, /compilation failed: must evaluate to one of bool, not int/],
    ['an unknown reason', { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 0', reason: 'Nope' }] }, /reason: Unsupported value: "Nope": supported values: "FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"/],
    ['a bad fieldPath', { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: 'true', fieldPath: '.b' }] }, /fieldPath: Invalid value: "\.b": fieldPath must be a valid path/],
    ['a message with a line break', { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 0', message: 'a\nb' }] }, /message: Invalid value: "a\\nb": message must not contain line breaks/],
    ['optionalOldSelf without oldSelf', { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 0', optionalOldSelf: true }] }, /optionalOldSelf: Invalid value: true: may not be set if rule does not use oldSelf/],
    ['oldSelf in items of an atomic list', { type: 'array', maxItems: 4, items: { type: 'string', maxLength: 4, 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] } }, /oldSelf cannot be used on the uncorrelatable portion of the schema within v\.properties\[f\]\.items/],
    ['uniqueItems', { type: 'array', uniqueItems: true, items: { type: 'string' } }, /^v\.properties\[f\]\.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic$/],
    ['a default outside the schema', { type: 'integer', maximum: 10, default: 20 }, /^v\.properties\[f\]\.default: Invalid value: 20: .*less than or equal to 10/],
    ['a default failing a rule', { type: 'string', default: 'ABC', 'x-kubernetes-validations': [{ rule: 'self.lowerAscii() == self', message: 'lowercase only' }] }, /^v\.properties\[f\]\.default: Invalid value: "ABC": Invalid value: "string": lowercase only$/],
    ['an over-budget rule', { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: "self.all(x, x.matches('^[a-z]+$'))" }] }, /rule: Forbidden: estimated rule cost exceeds budget by factor of (more than 100x|[\d.]+x) \(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared\)/],
  ])('refuses %s', (_what, node, message) => {
    const errs = one(node);
    expect(errs.some((e) => message.test(e)), errs.join('\n')).toBe(true);
  });

  it('refuses a CRD whose rules together cost too much, naming each rule', () => {
    const rule = { rule: "self.all(x, x.matches('^[a-z]+$'))" };
    // Each rule alone is within the per-rule limit; it runs once per item of the outer list.
    const inner = { type: 'array', maxItems: 3000, items: { type: 'string', maxLength: 300 }, 'x-kubernetes-validations': [rule] };
    const item = { type: 'array', maxItems: 100, items: { type: 'object', properties: { t: inner } } };
    const errs = compileCrdRules({ type: 'object', properties: { a: item, b: item } }, kube, 'v').errors.map(formatFieldError);
    expect(errs.filter((e) => e.includes('estimated rule cost exceeds budget'))).toEqual([]);
    expect(errs).toContain('v.properties[a].items.properties[t].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema');
    expect(errs).toContain('v.properties[b].items.properties[t].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema');
    expect(errs.some((e) => /^v: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of /.test(e))).toBe(true);
  });

  it('accepts the fixture', () => {
    expect(compileCrdRules(schema(), kube, 'v').errors).toEqual([]);
  });
});
