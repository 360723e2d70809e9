// The policy compiler: compile errors kept per expression (never thrown), JSON integers as CEL
// ints, lazily composited variables evaluated at most once, errors worded as upstream's.
import { describe, it, expect } from 'vitest';
import { bindVariables, compilePolicy, evaluate, toCel, type Activation } from './compile.js';

const base = (object: unknown): Omit<Activation, 'variables'> => ({ object: toCel(object), oldObject: null, request: {}, params: null, namespaceObject: null, authorizer: null });

describe('compilePolicy', () => {
  it('keeps compile errors per expression with their field path', () => {
    const p = compilePolicy({
      metadata: { name: 'p', generation: 2 },
      spec: { validations: [{ expression: 'object.spec.replicas <= 5' }, { expression: 'object.spec.replicas <=' }, { expression: "'not bool'" }], failurePolicy: 'Ignore' },
    });
    expect(p.generation).toBe(2);
    expect(p.failurePolicy).toBe('Ignore');
    expect(p.validations[0]!.expression.error).toBeUndefined();
    expect(p.validations[1]!.expression.error).toMatch(/^spec\.validations\[1\]\.expression: Invalid value: "object\.spec\.replicas <=": compilation failed/);
    expect(p.validations[2]!.expression.error).toContain('must evaluate to one of bool');
    expect(p.errors).toHaveLength(2);
  });

  it('evaluates JSON integers as CEL ints (arithmetic works) and reports runtime errors as upstream', async () => {
    const p = compilePolicy({ metadata: { name: 'p' }, spec: { validations: [{ expression: 'object.spec.replicas + 1 == 4' }, { expression: "object.spec.missing == 1" }] } });
    const act = { ...base({ spec: { replicas: 3 } }), variables: {} } as Activation;
    expect(await evaluate(p.validations[0]!.expression, act)).toBe(true);
    await expect(evaluate(p.validations[1]!.expression, act)).rejects.toThrow(/^expression 'object\.spec\.missing == 1' resulted in error: /);
  });

  it('computes each variable once, on first use, with earlier variables in scope', async () => {
    const p = compilePolicy({
      metadata: { name: 'p' },
      spec: {
        variables: [
          { name: 'replicas', expression: 'object.spec.replicas' },
          { name: 'doubled', expression: 'variables.replicas * 2' },
          { name: 'broken', expression: 'object.nope' },
        ],
        validations: [{ expression: 'variables.doubled == 6 && variables.replicas == 3' }, { expression: 'variables.broken == 1' }],
      },
    });
    const act = base({ spec: { replicas: 3 } }) as Activation;
    act.variables = await bindVariables(p, act);
    expect(await evaluate(p.validations[0]!.expression, act)).toBe(true);
    await expect(evaluate(p.validations[1]!.expression, act)).rejects.toThrow(/composited variable "broken" fails to evaluate/);
  });

  it('audit annotation values are strings or null; other types are compile errors', () => {
    const p = compilePolicy({ metadata: { name: 'p' }, spec: { auditAnnotations: [{ key: 'a', valueExpression: "'x'" }, { key: 'b', valueExpression: 'null' }, { key: 'c', valueExpression: '1' }] } });
    expect(p.auditAnnotations.map((a) => a.expr.error === undefined)).toEqual([true, true, false]);
  });

  it('leaves doubles and strings alone in toCel', () => {
    expect(toCel({ a: 1, b: 1.5, c: ['x', 2], d: null })).toEqual({ a: 1n, b: 1.5, c: ['x', 2n], d: null });
  });
});
