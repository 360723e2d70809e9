import { describe, expect, it } from 'vitest';
import { StatusError } from '../../apierrors/status.js';
import { createNaming } from '../../naming/naming.js';
import { realisticPod } from '../samples/realistic-pod.js';
import { kindSchemaNames, sampleObject } from '../samples/sample-objects.js';
import { compareYamlKeys, decodeYaml, encodeYaml, formatGoFloat, readAsJson, readYaml } from './yaml-codec.js';

const dec = (s: string) => decodeYaml(Buffer.from(s, 'utf8'));

function decodeError(text: string): StatusError {
  try {
    dec(text);
  } catch (e) {
    expect(e).toBeInstanceOf(StatusError);
    expect((e as StatusError).code).toBe(400);
    return e as StatusError;
  }
  throw new Error(`expected ${JSON.stringify(text)} to fail`);
}

describe('decodeYaml', () => {
  it('decodes a manifest', () => {
    const r = dec(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: web
        image: nginx
        args: ["--port", "80"]
`);
    expect(r.value).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: { replicas: 3, template: { spec: { containers: [{ name: 'web', image: 'nginx', args: ['--port', '80'] }] } } },
    });
    expect(r.duplicateFields).toEqual([]);
  });

  it.each([
    // YAML 1.1 scalars as go-yaml v2 resolves them.
    ['on', true],
    ['Off', false],
    ['yes', true],
    ['y', true],
    ['N', false],
    ['~', null],
    ['', null],
    ['Null', null],
    ['0777', 511],
    ['0x1F', 31],
    ['-0x10', -16],
    ['0o17', 15],
    ['0b101', 5],
    ['1_000', 1000],
    ['+12', 12],
    ['0888', 888],
    ['1e3', 1000],
    ['.5', 0.5],
    ['1.5', 1.5],
    ['2001-12-14', '2001-12-14'],
    ['2001-12-14T21:59:43.10-05:00', '2001-12-14T21:59:43.10-05:00'],
    ['1:20', '1:20'],
    ['"on"', 'on'],
    ["'123'", '123'],
    ['!!str 123', '123'],
    ['!!int "42"', 42],
    ['!!float 1', 1],
    ['!custom value', 'value'],
    ['abc', 'abc'],
    ['9223372036854775807', 9223372036854775807],
    ['18446744073709551615', 18446744073709551615],
  ])('resolves %s', (scalar, value) => {
    expect(dec(`v: ${scalar}\n`).value).toEqual({ v: value });
  });

  it('turns non-string keys into strings as sigs.k8s.io/yaml does', () => {
    expect(dec('1: a\ntrue: b\non: c\n1.5: d\n').value).toEqual({ '1': 'a', true: 'c', '1.5': 'd' });
    expect(decodeError('? [a]\n: b\n').message).toMatch(/unsupported map key of type sequence/);
    expect(decodeError('~: b\n').message).toMatch(/unsupported map key of type null/);
  });

  it('reports duplicate keys with paths and go-yaml strict messages; last wins', () => {
    const r = dec(`spec:
  replicas: 1
  template:
    metadata:
      labels:
        app: a
        app: b
  replicas: 2
list:
- {x: 1, x: 2}
`);
    expect(r.value).toEqual({ spec: { replicas: 2, template: { metadata: { labels: { app: 'b' } } } }, list: [{ x: 2 }] });
    expect(r.duplicateFields).toEqual(['spec.template.metadata.labels.app', 'spec.replicas', 'list[0].x']);
    expect(r.duplicateKeyErrors).toEqual([
      'line 7: key "app" already set in map',
      'line 8: key "replicas" already set in map',
      'line 10: key "x" already set in map',
    ]);
  });

  it('supports anchors, aliases and merge keys with copies, not shared objects', () => {
    const r = dec(`base: &b {a: 1, b: 2}
derived:
  <<: *b
  b: 3
list: [*b, *b]
`);
    const v = r.value as { base: object; derived: object; list: Array<Record<string, number>> };
    expect(v).toEqual({ base: { a: 1, b: 2 }, derived: { a: 1, b: 3 }, list: [{ a: 1, b: 2 }, { a: 1, b: 2 }] });
    expect(v.list[0]).not.toBe(v.list[1]);
    expect(r.duplicateFields).toEqual([]);
  });

  it('rejects a billion-laughs document', () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(97 + i - 1);
      const cur = String.fromCharCode(97 + i);
      lines.push(`${cur}: &${cur} [${Array(10).fill(`*${prev}`).join(',')}]`);
    }
    expect(decodeError(lines.join('\n')).message).toMatch(/excessive aliasing/);
  });

  it.each([
    ['a: b: c\n', /^error converting YAML to JSON: yaml: line 1, column 5: /],
    ['a:\n  - b\n c: d\n', /^error converting YAML to JSON: yaml: line 3, column \d+: /],
    ['key: "unterminated\n', /^error converting YAML to JSON: yaml: line \d+, column \d+: /],
    ['a: *nope\n', /unknown anchor 'nope'/],
    ['a: .nan\n', /unsupported value: NaN/],
    ['a: !!int abc\n', /cannot decode !!str `abc` as a !!int/],
    ['a: 1\n---\nb: 2\n', /holds 2 YAML documents/],
    ['<<: 5\n', /map merge requires map/],
  ])('reports %j with line and column', (text, message) => {
    expect(decodeError(text).message).toMatch(message);
  });

  it('accepts a leading document marker, a trailing empty document and an empty body', () => {
    expect(dec('---\na: 1\n---\n').value).toEqual({ a: 1 });
    expect(dec('').value).toBeNull();
    expect(decodeYaml('a: 1\n---\nb: 2\n', { multipleDocuments: true }).value).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it('bounds nesting without overflowing the stack', () => {
    expect(decodeError('['.repeat(600) + ']'.repeat(600)).message).toMatch(/exceeded maxDepth/);
    expect(decodeError('['.repeat(50_000)).message).toMatch(/exceeded maxDepth/);
  });

  it('keeps __proto__ as an own key', () => {
    const v = dec('__proto__: {polluted: true}\n').value as object;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__']);
  });
});

describe('encodeYaml', () => {
  it('writes upstream-like YAML', () => {
    const text = encodeYaml({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'x', labels: { b: 'true', a: 'on', c: '123', d: '', e: '*', f: 'a: b', g: '2001-12-14', h: 'plain' }, annotations: { note: 'line 1\nline 2\n' } },
      spec: { containers: [{ name: 'a', ports: [{ containerPort: 80 }], args: [] }], extra: {}, ratio: 0.5, big: 1234567.5, tiny: 0.00001, n: null, flag: false },
    }).toString();
    expect(text).toBe(`apiVersion: v1
kind: Pod
metadata:
  annotations:
    note: |
      line 1
      line 2
  labels:
    a: "on"
    b: "true"
    c: "123"
    d: ""
    e: '*'
    f: 'a: b'
    g: "2001-12-14"
    h: plain
  name: x
spec:
  big: 1.2345675e+06
  containers:
  - args: []
    name: a
    ports:
    - containerPort: 80
  extra: {}
  flag: false
  "n": null
  ratio: 0.5
  tiny: 1e-05
`);
  });

  it('keeps object order on request and does not fold long lines', () => {
    const long = 'x'.repeat(300);
    expect(encodeYaml({ b: 1, a: long }, { keyOrder: 'object' }).toString()).toBe(`b: 1\na: ${long}\n`);
  });

  it('orders keys as go-yaml does', () => {
    const keys = ['b', 'a10', 'a2', 'B', 'a-b', 'ab', '_x', 'a', 'Z'];
    expect([...keys].sort(compareYamlKeys)).toEqual(['_x', 'B', 'Z', 'a', 'a-b', 'a2', 'a10', 'ab', 'b']);
  });

  it('formats floats like Go', () => {
    expect([0.5, 1234567.5, 100000.5, 0.0001, 0.00001, -2.5e-7, 3, 1e21].map(formatGoFloat)).toEqual([
      '0.5',
      '1.2345675e+06',
      '100000.5',
      '0.0001',
      '1e-05',
      '-2.5e-07',
      '3',
      '1e+21',
    ]);
  });

  it('round-trips strings that look like other things', () => {
    const tricky = [
      'on', 'Yes', 'y', 'N', '0777', '0x1f', '1_000', '1e3', '.5', '2001-12-14', '2001-12-14T10:00:00Z', '1:20', '', ' ', 'null', '~',
      '- x', 'a: b', 'a:b', '#x', 'a #b', '!x', '&x', '*x', '%x', '@x', '`x', '{', '}', '[', ']', ',', '?', ':', 'x:', '<<', '=',
      'line 1\nline 2', 'trailing\n\n', '  leading', 'trailing ', 'tab\there', 'ünï ✓', '\u2028', '\ufeffbom', '"quoted"', "it's",
      '---', '...', 'x'.repeat(2000), '\n', 'a\r\nb', '-1', '+1', '.inf', '.NaN',
    ];
    for (const t of tricky) {
      const v = { [t || 'empty']: t, list: [t] };
      expect(decodeYaml(encodeYaml(v)).value).toEqual(v);
    }
  });

  it('round-trips a sample of every kind', () => {
    const naming = createNaming('cluster');
    for (const name of kindSchemaNames()) {
      const sample = sampleObject(name, { naming });
      const back = decodeYaml(encodeYaml(sample));
      expect(back.value).toEqual(sample);
      expect(back.duplicateFields).toEqual([]);
    }
  });
});

describe('decodeYaml fuzz', () => {
  it('only ever throws a 400 StatusError', () => {
    let seed = 99;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const base = encodeYaml(realisticPod()).toString();
    const alphabet = ':-[]{}&*!|>"\'#% \n\t,?ab01.<';
    const started = performance.now();
    for (let i = 0; i < 1000; i++) {
      const chars = base.split('');
      for (let k = 0; k < 1 + rnd(4); k++) {
        const pos = rnd(chars.length);
        const c = alphabet[rnd(alphabet.length)]!;
        const op = rnd(3);
        if (op === 0) chars[pos] = c;
        else if (op === 1) chars.splice(pos, 1);
        else chars.splice(pos, 0, c);
      }
      try {
        dec(chars.join(''));
      } catch (e) {
        if (!(e instanceof StatusError) || e.code !== 400) throw e;
      }
    }
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});

// decodeYaml reads a JSON object body with JSON.parse when the YAML reader would give the same
// answer; every case here must come out of both exactly alike (value, duplicates, error text).
describe('decodeYaml on JSON bodies: the same as the YAML reader', () => {
  type Outcome = { value?: unknown; duplicateFields?: string[]; duplicateKeyErrors?: string[]; error?: string; negativeZero?: boolean };
  const outcome = (read: (b: Buffer) => ReturnType<typeof decodeYaml>, text: string): Outcome => {
    try {
      const r = read(Buffer.from(text, 'utf8'));
      const v = r.value as Record<string, unknown> | null;
      return { value: r.value, duplicateFields: r.duplicateFields, duplicateKeyErrors: r.duplicateKeyErrors, negativeZero: v !== null && typeof v === 'object' && Object.is(v.n, -0) };
    } catch (e) {
      return { error: e instanceof StatusError ? `${e.code} ${e.message}` : String(e) };
    }
  };
  const same = (text: string): Outcome => {
    const fast = outcome((b) => decodeYaml(b), text);
    expect(fast, text.slice(0, 200)).toStrictEqual(outcome((b) => readYaml(b), text));
    return fast;
  };

  it.each([
    ['compact object', '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"x"}]}}'],
    ['pretty, lines at column 0', '{\n"a": {\n"b": [1, 2.5, -3, true, false, null]\n}\n}'],
    ['tabs and CRLF as white space', '{\r\n\t"a":\t1,\r\n\t"b": [ ]  , "c" : { } }'],
    ['escapes', '{"s":"\\/\\u00e9\\ud83d\\ude00\\n\\t\\"\\\\\\b\\f\\r x\\u0000y", "lone":"\\ud800"}'],
    ['keys YAML treats specially when plain', '{"<<": {"b": 1}, "yes": "no", "~": null, "1": 2, "__proto__": {"x": 1}, "": ""}'],
    ['strings that look like YAML', '{"a":"#x", "b":"- y", "c":"0777", "d":"1_000", "e":"2024-01-01", "f":"on", "g":": z", "h":"&anchor *alias"}'],
    ['numbers', '{"a":12345678901234567890, "b":9007199254740993, "c":1e300, "d":-1.5E-7, "e":0, "f":0.0, "g":1E+2, "h":123456789012345678901234567890}'],
    ['a long key', `{"${'k'.repeat(2000)}": 1}`],
    ['non-ASCII text', '{"a":"日本語 ünï \u0085 \u2028 \ufeff"}'],
    ['leading white space', '  \n {"a":1}'],
  ])('%s (read by the shortcut)', (_name, text) => {
    expect(readAsJson(text)).toBeDefined();
    expect(same(text).error).toBeUndefined();
  });

  it.each([
    ['repeated keys at several nestings', '{"a":1,"a":2,"m":{"b":[{"c":1,"c":2}],"b":3}}'],
    ['-0 (YAML reads 0)', '{"n": -0}'],
    ['-0.0 (YAML reads -0)', '{"n": -0.0}'],
    ['an out-of-range number', '{"a": 1e400}'],
    ['an out-of-range negative number in a list', '{"a": [1, -1e999]}'],
    ['two documents', '{"a":1}\n---\n{"b":2}'],
    ['a raw DEL and C1 character', '{"a":"x\u007fy\u0090"}'],
    ['a byte order mark first', '\ufeff{"a":1}'],
    ['not JSON: flow YAML', '{a: 1, b: [x, y]}'],
    ['not JSON: trailing comma', '{"a":1,}'],
    ['nesting past the YAML bound', `{"a":${'['.repeat(600)}${']'.repeat(600)}}`],
    ['nesting near the shortcut bound', `{"a":${'['.repeat(300)}${']'.repeat(300)}}`],
    ['a trailing comment (YAML only)', '{"a":1} # c'],
  ])('%s (left to the YAML reader)', (_name, text) => {
    expect(readAsJson(text)).toBeUndefined();
    same(text);
  });

  it('random JSON objects, compact and indented, read alike (seeded)', () => {
    let seed = 19;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const strings = ['', 'a', 'yes', 'null', '~', '0x1f', '1e3', '- x', '#', 'a: b', '"q"', '\\', 'é', '😀', '\t', '\n', ' lead', 'trail ', '<<', '__proto__', '12:30', '.5', '+1', '0o7'];
    const gen = (depth: number): unknown => {
      const k = rnd(depth > 4 ? 5 : 7);
      switch (k) {
        case 0:
          return strings[rnd(strings.length)];
        case 1:
          return [0, 1, -1, 2.5, -0.125, 1e21, 2 ** 53 + 1, 1e-7, 123456789][rnd(9)];
        case 2:
          return [true, false, null][rnd(3)];
        case 3:
          return `s${rnd(1000)}`;
        case 4:
          return rnd(100000) - 50000;
        case 5:
          return Array.from({ length: rnd(4) }, () => gen(depth + 1));
        default: {
          const o: Record<string, unknown> = {};
          for (let i = rnd(5); i > 0; i--) o[rnd(3) === 0 ? strings[rnd(strings.length)]! : `k${rnd(50)}`] = gen(depth + 1);
          return o;
        }
      }
    };
    let shortcuts = 0;
    for (let i = 0; i < 400; i++) {
      const obj = { root: gen(0), other: gen(1) };
      same(JSON.stringify(obj));
      same(JSON.stringify(obj, null, i % 2 === 0 ? 2 : '\t'));
      if (readAsJson(JSON.stringify(obj)) !== undefined) shortcuts++;
    }
    // Most random objects take the shortcut (the rest repeat a key).
    expect(shortcuts).toBeGreaterThan(300);
  });
});
