import { describe, expect, it } from 'vitest';
import { StatusError } from '../../apierrors/status.js';
import { decodeJson, encodeJson, indentJson } from './json-codec.js';

const enc = (s: string) => Buffer.from(s, 'utf8');

function decodeError(text: string): StatusError {
  try {
    decodeJson(enc(text));
  } catch (e) {
    expect(e).toBeInstanceOf(StatusError);
    return e as StatusError;
  }
  throw new Error(`expected ${JSON.stringify(text)} to fail`);
}

describe('decodeJson', () => {
  it('decodes valid JSON with no duplicates', () => {
    const r = decodeJson(enc('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","labels":{"x":"y"}},"n":[1,{"a:b":"c:d"}]}'));
    expect(r.value).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', labels: { x: 'y' } }, n: [1, { 'a:b': 'c:d' }] });
    expect(r.duplicateFields).toEqual([]);
  });

  it.each([
    ['{"spec":{"replicas":1,"replicas":2}}', ['spec.replicas'], { spec: { replicas: 2 } }],
    ['{"a":1,"a":2,"a":3}', ['a'], { a: 3 }],
    ['{"metadata":{"labels":{"app":"x","app":"y"}}}', ['metadata.labels.app'], { metadata: { labels: { app: 'y' } } }],
    [
      '{"spec":{"containers":[{"name":"a"},{"name":"b","name":"c"}]}}',
      ['spec.containers[1].name'],
      { spec: { containers: [{ name: 'a' }, { name: 'c' }] } },
    ],
    ['[{"x":1},[{"y":1,"y":2}]]', ['[1][0].y'], [{ x: 1 }, [{ y: 2 }]]],
    ['{"a\\u0062":1,"ab":2}', ['ab'], { ab: 2 }],
    ['{"kind":"A","spec":{"kind":"B"},"kind":"C"}', ['kind'], { kind: 'C', spec: { kind: 'B' } }],
    // A colon inside strings must not make the key count differ.
    ['{"a":"x:y","b":{"c":":"}}', [], { a: 'x:y', b: { c: ':' } }],
    ['{"a":"\\"","a":1}', ['a'], { a: 1 }],
    // Runs of backslashes before a quote: even runs end the string, odd runs escape the quote.
    ['{"a":"x\\\\","b":{"c":1},"b":2}', ['b'], { a: 'x\\', b: 2 }],
    ['{"a":"\\\\\\":","b":1}', [], { a: '\\":', b: 1 }],
    ['{"a\\\\":1,"a\\\\":2}', ['a\\'], { 'a\\': 2 }],
    // Brackets and colons inside strings count for neither depth nor keys; whitespace around them does not matter.
    ['{ "a" : "[{:" , "b" : [ { "c" : 1 , "c" : 2 } ] }', ['b[0].c'], { a: '[{:', b: [{ c: 2 }] }],
    ['{"":1,"":2}', [''], { '': 2 }],
  ])('finds duplicates in %s', (text, dups, value) => {
    const r = decodeJson(enc(text));
    expect(r.duplicateFields).toEqual(dups);
    expect(r.value).toEqual(value);
  });

  it.each([
    ['{"a":1,}', "invalid character '}' looking for beginning of object key string at line 1, column 8"],
    ['{"a" 1}', "invalid character '1' after object key at line 1, column 6"],
    ['{"a":1 "b":2}', "invalid character '\"' after object key:value pair at line 1, column 8"],
    ['[1 2]', "invalid character '2' after array element at line 1, column 4"],
    ['{}x', "invalid character 'x' after top-level value at line 1, column 3"],
    ['{\n  "a": tru\n}', "invalid character '\\n' in literal true (expecting 'e') at line 2, column 11"],
    ['{"a": nul}', "invalid character '}' in literal null (expecting 'l') at line 1, column 10"],
    ['{"a": -x}', "invalid character 'x' in numeric literal at line 1, column 8"],
    ['{"a": 1.}', "invalid character '}' after decimal point in numeric literal at line 1, column 9"],
    ['{"a": 1e}', "invalid character '}' in exponent of numeric literal at line 1, column 9"],
    ['{"a": "\\q"}', "invalid character 'q' in string escape code at line 1, column 9"],
    ['{"a": "\\u12g4"}', "invalid character 'g' in \\u hexadecimal character escape at line 1, column 12"],
    ['{"a": "x\ty"}', "invalid character '\\t' in string literal at line 1, column 9"],
    ['{"a":', 'unexpected end of JSON input at line 1, column 6'],
    ['', 'unexpected end of JSON input at line 1, column 1'],
    ["{'a':1}", "invalid character '\\'' looking for beginning of object key string at line 1, column 2"],
    ['\uFEFF{}', "invalid character '\uFEFF' looking for beginning of value at line 1, column 1"],
    ['[01]', "invalid character '1' after array element at line 1, column 3"],
  ])('reports %j like encoding/json with a position', (text, message) => {
    const e = decodeError(text);
    expect(e.code).toBe(400);
    expect(e.reason).toBe('BadRequest');
    expect(e.message).toBe(`json parse error: ${message}`);
  });

  it('rejects nesting beyond the bound without overflowing the stack', () => {
    const deep = '['.repeat(10_001) + ']'.repeat(10_001);
    expect(decodeError(deep).message).toBe("json parse error: exceeded max depth at line 1, column 10001");
    const ok = '['.repeat(10_000) + ']'.repeat(10_000);
    expect(() => decodeJson(enc(ok))).not.toThrow();
    const deepObjects = '{"a":'.repeat(200_000) + '1' + '}'.repeat(200_000);
    expect(decodeError(deepObjects).message).toMatch(/exceeded max depth/);
    const brokenDeep = '['.repeat(200_000);
    expect(decodeError(brokenDeep).message).toMatch(/exceeded max depth/);
  });

  it('honours a smaller maxDepth', () => {
    expect(() => decodeJson(enc('[[[1]]]'), { maxDepth: 2 })).toThrow(StatusError);
    expect(decodeJson(enc('[[1]]'), { maxDepth: 2 }).value).toEqual([[1]]);
  });

  it('keeps __proto__ as a plain own key', () => {
    const r = decodeJson(enc('{"__proto__":{"polluted":true}}'));
    expect(Object.getPrototypeOf(r.value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('accepts a string input', () => {
    expect(decodeJson('{"a":[1,2]}').value).toEqual({ a: [1, 2] });
  });
});

describe('encodeJson', () => {
  it('writes compact JSON with a trailing newline, as Go json.Encoder', () => {
    expect(encodeJson({ a: 1, b: 'é' }).toString()).toBe('{"a":1,"b":"é"}\n');
    expect(encodeJson({ a: 1 }, { newline: false }).toString()).toBe('{"a":1}');
    expect(encodeJson({ a: [1] }, { pretty: true }).toString()).toBe('{\n  "a": [\n    1\n  ]\n}');
  });
});

describe('decodeJson fuzz', () => {
  it('never throws anything but a 400 StatusError on mutated input', () => {
    let seed = 12345;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const base = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x', labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80 }] }] } });
    const alphabet = '{}[]:,"\\ -0123456789eE.tfnulrs\u00e9\t\n';
    for (let iter = 0; iter < 3000; iter++) {
      const chars = base.split('');
      const edits = 1 + Math.floor(rnd() * 4);
      for (let k = 0; k < edits; k++) {
        const pos = Math.floor(rnd() * chars.length);
        const op = rnd();
        const c = alphabet[Math.floor(rnd() * alphabet.length)]!;
        if (op < 0.4) chars[pos] = c;
        else if (op < 0.7) chars.splice(pos, 1);
        else chars.splice(pos, 0, c);
      }
      const text = chars.join('');
      try {
        decodeJson(enc(text));
      } catch (e) {
        expect(e).toBeInstanceOf(StatusError);
        expect((e as StatusError).code).toBe(400);
      }
    }
  });
});

describe('indentJson', () => {
  it.each([
    ['{}'],
    ['[]'],
    ['{"a":{},"b":[],"c":[{}]}'],
    ['{"kind":"Pod","metadata":{"name":"p","labels":{"a":"b"}},"items":[1,2.5,-30,true,false,null]}'],
    ['{"s":"with {braces}, [brackets], colons: and \\"quotes\\" \\\\","t":"é"}'],
    ['[[[]],[{"x":[1]}]]'],
  ])('indents %s as Go MarshalIndent', (text) => {
    expect(indentJson(text).toString()).toBe(JSON.stringify(JSON.parse(text), null, 2));
  });

  it('drops the encoder newline and keeps every digit of large numbers', () => {
    expect(indentJson(Buffer.from('{"n":12345678901234567890}\n')).toString()).toBe('{\n  "n": 12345678901234567890\n}');
  });
});
