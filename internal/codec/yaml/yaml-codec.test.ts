import { describe, expect, it } from 'vitest';
import { StatusError } from '../../apierrors/status.js';
import { createNaming } from '../../naming/naming.js';
import { realisticPod } from '../samples/realistic-pod.js';
import { kindSchemaNames, sampleObject } from '../samples/sample-objects.js';
import { compareYamlKeys, decodeYaml, encodeYaml, formatGoFloat } from './yaml-codec.js';

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
