import { describe, expect, it } from 'vitest';
import { compileExpression, kubernetesCelEnvironment, registerObjectConstruction } from './cel.js';
import { rewriteObjectConstruction } from './object-construction.js';

describe('rewriteObjectConstruction', () => {
  it.each([
    ['no construction', 'object.spec.replicas > 3', 'object.spec.replicas > 3'],
    ['Object with a nested type', 'Object{spec: Object.spec{replicas: 3}}', '__object("Object", {"spec": __object("Object.spec", {"replicas": 3})})'],
    ['empty construction', 'Object.spec{}', '__object("Object.spec", {})'],
    [
      'deep type name, list and map values, ternary inside',
      'Object{metadata: Object.metadata{labels: {"a": x ? "b" : "c"}}, spec: Object.spec{ports: [Object.spec.ports{port: 80}]}}',
      '__object("Object", {"metadata": __object("Object.metadata", {"labels": {"a": x ? "b" : "c"}}), "spec": __object("Object.spec", {"ports": [__object("Object.spec.ports", {"port": 80})]})})',
    ],
    ['JSONPatch', 'JSONPatch{op: "add", path: "/a", value: 1}', '__jsonpatch({"op": "add", "path": "/a", "value": 1})'],
    ['strings untouched', '"Object{a: 1}" + \'JSONPatch{x: 2}\' + r"Object{}"', '"Object{a: 1}" + \'JSONPatch{x: 2}\' + r"Object{}"'],
    ['triple-quoted string untouched', '"""Object{a: "x"}"""', '"""Object{a: "x"}"""'],
    ['comments untouched', 'Object{a: 1} // Object{b: 2}', '__object("Object", {"a": 1}) // Object{b: 2}'],
    ['other type names stay', 'Foo{a: 1}', 'Foo{a: 1}'],
    ['a field named Object is not a type', 'x.Object{a: 1}', 'x.Object{a: 1}'],
    ['whitespace and newlines', 'Object {\n  spec : Object.spec {\n replicas: 1 }\n}', '__object("Object", {\n  "spec" : __object("Object.spec", {\n "replicas": 1 })\n})'],
  ])('%s', (_name, src, want) => {
    expect(rewriteObjectConstruction(src)).toBe(want);
  });
});

describe('construction in an environment that declares it', () => {
  const env = registerObjectConstruction(kubernetesCelEnvironment({ object: 'dyn' }));
  it('evaluates Object and JSONPatch values as maps', () => {
    const obj = compileExpression(env, 'Object{metadata: Object.metadata{labels: {"env": object.metadata.name + "-x"}}}', 'm');
    expect(obj.run({ object: { metadata: { name: 'a' } } })).toEqual({ metadata: { labels: { env: 'a-x' } } });
    const patch = compileExpression(env, '[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a/b~c"), value: "v"}]', 'm');
    expect(patch.run({ object: {} })).toEqual([{ op: 'add', path: '/metadata/labels/a~1b~0c', value: 'v' }]);
  });
  it('refuses an unknown JSONPatch field at run time and an unknown type name at compile time, quoting the original source', () => {
    const bad = compileExpression(env, 'JSONPatch{op: "add", paths: "/a"}', 'm');
    expect(() => bad.run({ object: {} })).toThrow(/JSONPatch has no field "paths"/);
    expect(() => compileExpression(env, 'Foo{a: 1}', 'spec.mutations[0].applyConfiguration.expression')).toThrow(/spec\.mutations\[0\]\.applyConfiguration\.expression: Invalid value: "Foo\{a: 1\}"/);
  });
  it('is not offered by environments without it', () => {
    expect(() => compileExpression(kubernetesCelEnvironment({ object: 'dyn' }), 'Object{a: 1}', 'x')).toThrow(/compilation failed/);
  });
});
