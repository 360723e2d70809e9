import { describe, expect, it } from 'vitest';
import { encodeStored } from '../storedobject/stored-object.js';
import { FieldSet } from './field-set.js';
import { decodeFieldsV1, encodeFieldsV1, fieldsV1String, sharedFieldsV1 } from './fields-v1.js';
import {
  compareElements,
  fieldElement as f,
  indexElement as i,
  keyElement,
  parseElement,
  pathString,
  valueElement as v,
  type Path,
} from './path-element.js';

const k = (fields: Record<string, string | number | boolean>) => keyElement(Object.entries(fields));
const paths = (s: FieldSet) => s.paths().map(pathString);

describe('path elements', () => {
  it('order fields < keys < values < indexes', () => {
    const sorted = [i(0), v('a'), k({ name: 'a' }), f('z')].sort(compareElements);
    expect(sorted.map((pe) => pe.id)).toEqual(['f:z', 'k:{"name":"a"}', 'v:"a"', 'i:0']);
  });

  it('order values numbers < strings < booleans < lists < maps < null, numbers by value', () => {
    const sorted = [v(null), v({ a: 1 }), v([1]), v(true), v('b'), v(10), v(9), v(false), v('a')].sort(compareElements);
    expect(sorted.map((pe) => pe.id)).toEqual(['v:9', 'v:10', 'v:"a"', 'v:"b"', 'v:false', 'v:true', 'v:[1]', 'v:{"a":1}', 'v:null']);
  });

  it('order key elements by sorted key names, then values', () => {
    const a = k({ protocol: 'TCP', containerPort: 9 });
    const b = k({ containerPort: 10, protocol: 'TCP' });
    expect(a.id).toBe('k:{"containerPort":9,"protocol":"TCP"}');
    expect(compareElements(a, b)).toBeLessThan(0);
  });

  it.each([
    ['one string key', [['name', 'web']], 'k:{"name":"web"}'],
    ['two keys given in any order', [['protocol', 'TCP'], ['containerPort', 80]], 'k:{"containerPort":80,"protocol":"TCP"}'],
    ['a number and the string of it', [['port', '80']], 'k:{"port":"80"}'],
    ['a boolean and null', [['a', true], ['b', null]], 'k:{"a":true,"b":null}'],
    ['an object value (not interned)', [['o', { y: 1, x: 2 }]], 'k:{"o":{"x":2,"y":1}}'],
  ] as Array<[string, Array<[string, string | number | boolean | null | Record<string, number>]>, string]>)(
    'key elements are interned by their values: %s',
    (_name, fields, id) => {
      const a = keyElement(fields);
      const b = keyElement(fields.map(([n, x]) => [n, x]));
      expect(a.id).toBe(id);
      expect(b.id).toBe(id);
      // Scalar keys give the very same element; the id decides equality either way.
      expect(a === b).toBe(fields.every(([, x]) => x === null || typeof x !== 'object'));
      expect(keyElement([['port', 80]]).id).toBe('k:{"port":80}');
    },
  );

  it('orders field names by UTF-8 bytes', () => {
    // U+FF5E sorts before U+1F600 in UTF-8 but after its surrogates in UTF-16.
    expect(compareElements(f('\uff5e'), f('\u{1f600}'))).toBeLessThan(0);
  });

  it('spells paths as upstream prints them', () => {
    const p: Path = [f('spec'), f('containers'), k({ name: 'web' }), f('ports'), k({ containerPort: 80, protocol: 'TCP' })];
    expect(pathString(p)).toBe('.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"]');
    expect(pathString([f('metadata'), f('finalizers'), v('a')])).toBe('.metadata.finalizers[="a"]');
    expect(pathString([f('args'), i(2)])).toBe('.args[2]');
  });

  it.each([
    ['f:spec', 'f:spec'],
    ['k:{"b":"2","a":1}', 'k:{"a":1,"b":"2"}'],
    ['v:"x"', 'v:"x"'],
    ['i:3', 'i:3'],
  ])('parses %s', (raw, canonical) => {
    expect(parseElement(raw)?.id).toBe(canonical);
  });

  it.each(['f', 'fx', 'k:{', 'k:[1]', 'v:', 'i:x'])('rejects the malformed key %j', (raw) => {
    expect(() => parseElement(raw)).toThrow();
  });

  it('ignores element types it does not know', () => {
    expect(parseElement('z:whatever')).toBeUndefined();
  });
});

describe('field sets', () => {
  const s = (...ps: Path[]) => FieldSet.of(...ps);
  const abc = [f('a'), f('b'), f('c')];

  it('union, intersection and difference work level by level', () => {
    const x = s([f('a')], [f('b'), f('c')]);
    const y = s([f('b'), f('c')], [f('b'), f('d')]);
    expect(paths(x.union(y))).toEqual(['.a', '.b.c', '.b.d']);
    expect(paths(x.intersection(y))).toEqual(['.b.c']);
    expect(paths(x.difference(y))).toEqual(['.a']);
  });

  it('difference treats parents and children as distinct members (parent − child = parent)', () => {
    expect(paths(s([f('a'), f('b')]).difference(s(abc)))).toEqual(['.a.b']);
    expect(paths(s(abc).difference(s([f('a'), f('b')])))).toEqual(['.a.b.c']);
  });

  it('difference answers the set itself when it removes nothing, a new set otherwise', () => {
    const x = s(abc, [f('x')], [f('l'), keyElement([['name', 'a']])]);
    expect(x.difference(s([f('y')]))).toBe(x);
    expect(x.difference(s([f('a'), f('b'), f('z')]))).toBe(x);
    expect(x.difference(s([f('l'), keyElement([['name', 'b']])]))).toBe(x);
    const removed = x.difference(s([f('a'), f('b'), f('c')]));
    expect(removed).not.toBe(x);
    expect(paths(removed)).toEqual(['.x', '.l[name="a"]']);
    expect(paths(x)).toEqual(['.x', '.a.b.c', '.l[name="a"]']);
  });

  it('recursive difference also removes what is below a removed member', () => {
    expect(paths(s(abc, [f('x')]).recursiveDifference(s([f('a'), f('b')])))).toEqual(['.x']);
  });

  it('has and withPrefix', () => {
    const x = s(abc);
    expect(x.has(abc)).toBe(true);
    expect(x.has([f('a'), f('b')])).toBe(false);
    expect(paths(x.withPrefix(f('a')))).toEqual(['.b.c']);
    expect(x.withPrefix(f('zz')).isEmpty()).toBe(true);
  });

  it.each([
    ['equal sets', s(abc, [f('x')]), s(abc, [f('x')]), true],
    ['a parent is not below its child', s([f('a'), f('b')]), s(abc), false],
    ['a child is not below its parent', s(abc), s([f('a'), f('b')]), false],
    ['fewer members at a level', s([f('a')]), s([f('a')], [f('b')]), true],
    ['a member the other lacks', s([f('a')], [f('c')]), s([f('a')], [f('b')]), false],
    ['a deeper path the other lacks', s(abc, [f('a'), f('b'), f('d')]), s(abc), false],
    ['list items by key', s([f('l'), keyElement([['name', 'x']])]), s([f('l'), keyElement([['name', 'x']])], [f('l'), keyElement([['name', 'y']])]), true],
    ['a list item by another key', s([f('l'), keyElement([['name', 'z']])]), s([f('l'), keyElement([['name', 'x']])]), false],
    ['the empty set', s(), s([f('a')]), true],
    ['into the empty set', s([f('a')]), s(), false],
  ])('isSubsetOf: %s', (_name, x, y, want) => {
    expect(x.isSubsetOf(y)).toBe(want);
    // The definition: every member path of x is one of y.
    const ys = new Set(paths(y));
    expect(paths(x).every((p) => ys.has(p))).toBe(want);
  });

  it('iterates members before children at each level', () => {
    expect(paths(s([f('spec'), f('template'), f('x')], [f('spec'), f('replicas')]))).toEqual(['.spec.replicas', '.spec.template.x']);
  });
});

describe('FieldsV1', () => {
  const deploymentFields = FieldSet.of(
    [f('metadata'), f('labels'), f('app')],
    [f('spec'), f('replicas')],
    [f('spec'), f('selector')],
    [f('spec'), f('template'), f('spec'), f('containers'), k({ name: 'nginx' })],
    [f('spec'), f('template'), f('spec'), f('containers'), k({ name: 'nginx' }), f('image')],
    [f('spec'), f('template'), f('spec'), f('containers'), k({ name: 'nginx' }), f('name')],
    [f('metadata'), f('finalizers'), v('b')],
    [f('metadata'), f('finalizers'), v('a')],
  );

  it('serializes in element order, with "." last, compactly', () => {
    expect(fieldsV1String(deploymentFields)).toBe(
      '{"f:metadata":{"f:finalizers":{"v:\\"a\\"":{},"v:\\"b\\"":{}},"f:labels":{"f:app":{}}},' +
        '"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{"f:image":{},"f:name":{},".":{}}}}}}}',
    );
  });

  it('orders keyed items by value, not by text', () => {
    const set = FieldSet.of([f('ports'), k({ port: 10 })], [f('ports'), k({ port: 9 })]);
    expect(fieldsV1String(set)).toBe('{"f:ports":{"k:{\\"port\\":9}":{},"k:{\\"port\\":10}":{}}}');
  });

  it('round-trips', () => {
    const decoded = decodeFieldsV1(JSON.parse(fieldsV1String(deploymentFields)));
    expect(decoded.equals(deploymentFields)).toBe(true);
  });

  it('canonicalizes what it decodes', () => {
    const messy = { 'f:b': {}, 'f:a': { '.': {}, 'f:y': {}, 'f:x': {} }, 'k:{"b":1,"a":2}': {} };
    expect(fieldsV1String(decodeFieldsV1(messy))).toBe('{"f:a":{"f:x":{},"f:y":{},".":{}},"f:b":{},"k:{\\"a\\":2,\\"b\\":1}":{}}');
  });

  it('shares one set between equal FieldsV1 objects (fresh parses of the same bytes)', () => {
    const text = fieldsV1String(deploymentFields);
    const first = decodeFieldsV1(JSON.parse(text));
    expect(decodeFieldsV1(JSON.parse(text))).toBe(first);
    expect(first.equals(deploymentFields)).toBe(true);
    // Other text, other set; a malformed object is refused every time, never remembered.
    expect(decodeFieldsV1({ 'f:other': {} }).equals(first)).toBe(false);
    expect(() => decodeFieldsV1({ 'f:a': 1 })).toThrow();
    expect(() => decodeFieldsV1({ 'f:a': 1 })).toThrow();
  });

  it('reads an element whose object only holds "." as a member', () => {
    expect(paths(decodeFieldsV1({ 'f:a': { '.': {} } }))).toEqual(['.a']);
  });

  it('drops unknown element types', () => {
    expect(paths(decodeFieldsV1({ 'f:a': {}, 'z:future': { 'f:b': {} } }))).toEqual(['.a']);
  });

  it.each([
    ['a non-object', ['f:a']],
    ['a non-object value', { 'f:a': 1 }],
    ['a key without colon', { fa: {} }],
    ['a short key', { f: {} }],
    ['bad JSON in a key element', { 'k:{x}': {} }],
  ])('rejects %s', (_name, raw) => {
    expect(() => decodeFieldsV1(raw)).toThrow();
  });

  it('encodes the empty set as {}', () => {
    expect(encodeFieldsV1(new FieldSet())).toEqual({});
  });
});

describe('FieldsV1 decoding of objects shaped like recent ones', () => {
  // Two spellings of one key element: the later one wins, so member order decides the set.
  const a = 'k:{"name":"x","port":1}';
  const b = 'k:{"port":1,"name":"x"}';
  const fresh = (text: string) => JSON.parse(text) as Record<string, unknown>;
  const texts = [
    `{"f:spec":{"f:list":{"${a.replace(/"/g, '\\"')}":{"f:one":{}},"${b.replace(/"/g, '\\"')}":{"f:two":{}}}}}`,
    `{"f:spec":{"f:list":{"${b.replace(/"/g, '\\"')}":{"f:two":{}},"${a.replace(/"/g, '\\"')}":{"f:one":{}}}}}`,
    '{"f:metadata":{"f:labels":{"f:a":{},".":{}}},"f:spec":{"f:x":{}}}',
    '{"f:spec":{"f:x":{}},"f:metadata":{"f:labels":{".":{},"f:a":{}}}}',
    '{"f:metadata":{"f:labels":{"f:a":{},".":{}}},"f:spec":{"f:x":{},"f:y":{}}}',
    '{"f:metadata":{"f:labels":{"f:a":{}}}}',
  ];
  it('gives every object the set a first decoding of its text gives, in any order of decoding', () => {
    const expected = texts.map((t) => paths(decodeFieldsV1(fresh(t))));
    expect(expected[0]).not.toEqual(expected[1]);
    for (let round = 0; round < 3; round++) {
      for (const i of [0, 1, 2, 3, 4, 5, 1, 0, 3, 2, 5, 4]) expect(paths(decodeFieldsV1(fresh(texts[i]!)))).toEqual(expected[i]);
    }
  });
  it('remembers each object’s own text for the stored bytes', () => {
    for (const t of texts.flatMap((x) => [x, x, x])) {
      const obj = fresh(t);
      decodeFieldsV1(obj);
      const stored = encodeStored({ kind: 'K', metadata: { managedFields: [{ manager: 'm', fieldsV1: obj }] } }).toString();
      expect(stored).toBe(JSON.stringify({ kind: 'K', metadata: { managedFields: [{ manager: 'm', fieldsV1: obj }] } }));
    }
  });
  it('still refuses a value that is not an object after a well-formed object of the same keys', () => {
    decodeFieldsV1(fresh('{"f:a":{"f:b":{}}}'));
    expect(() => decodeFieldsV1(fresh('{"f:a":{"f:b":1}}'))).toThrow(/must be a JSON object/);
  });
});

describe('sharedFieldsV1: one value per stored text', () => {
  const text = '{"f:metadata":{"f:labels":{"f:shared-a":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"c\\"}":{".":{},"f:image":{}}}}}';

  it('gives the same frozen value for the same text, read as the same set as a fresh parse', () => {
    const a = sharedFieldsV1(text);
    const b = sharedFieldsV1(`${text}`);
    expect(b).toBe(a);
    expect(a).toEqual(JSON.parse(text));
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen((a as Record<string, Record<string, unknown>>)['f:metadata']!['f:labels'])).toBe(true);
    // Nothing can change what every object decoded with this text holds.
    expect(() => {
      (a as Record<string, unknown>)['f:status'] = {};
    }).toThrow(TypeError);
    expect(decodeFieldsV1(a).equals(decodeFieldsV1(JSON.parse(text)))).toBe(true);
    expect(decodeFieldsV1(a)).toBe(decodeFieldsV1(b));
  });

  it('is written back as its text', () => {
    const entry = { manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: sharedFieldsV1(text) };
    const bytes = encodeStored({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p', managedFields: [entry] } });
    expect(bytes.toString()).toContain(`"fieldsV1":${text}}`);
    expect(JSON.parse(bytes.toString()).metadata.managedFields[0].fieldsV1).toEqual(JSON.parse(text));
  });

  it('gives values that are not objects as JSON.parse reads them, and throws for text that is not JSON', () => {
    expect(sharedFieldsV1('"x"')).toBe('x');
    expect(sharedFieldsV1('null')).toBe(null);
    expect(() => sharedFieldsV1('{"f:a":')).toThrow(SyntaxError);
    // A text JSON.stringify would not write: read, not remembered as the value's text.
    const spaced = sharedFieldsV1('{ "f:spaced": {} }');
    expect(encodeStored({ kind: 'K', apiVersion: 'v1', metadata: { managedFields: [{ fieldsV1: spaced }] } }).toString()).toContain('"fieldsV1":{"f:spaced":{}}');
  });
});
