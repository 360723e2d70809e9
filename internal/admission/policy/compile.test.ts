// The policy compiler: compile errors kept per expression (never thrown), JSON integers as CEL
// ints, lazily composited variables evaluated at most once, errors worded as upstream's.
import { describe, it, expect } from 'vitest';
import { bindVariables, compilePolicy, evaluate, evaluateNow, PER_CALL_LIMIT, toCel, type Activation } from './compile.js';

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

  it('meters expressions: the per-call limit, then the evaluation\'s shared budget', async () => {
    const p = compilePolicy({ metadata: { name: 'p' }, spec: { validations: [{ expression: 'object.items.all(x, object.items.all(y, x + y >= 0))' }, { expression: 'object.items.size() > 0' }, { expression: "'abc'.matches('^a') && quantity('1Gi').isGreaterThan(quantity('1Mi'))" }] } });
    const act = { ...base({ items: Array.from({ length: 3000 }, (_, i) => i) }), variables: {} } as Activation;
    const budget = { remaining: 10_000_000 };
    await expect(evaluate(p.validations[0]!.expression, act, budget)).rejects.toThrow("resulted in error: operation cancelled: actual cost limit exceeded");
    expect(budget.remaining).toBe(10_000_000 - PER_CALL_LIMIT);
    expect(await evaluate(p.validations[1]!.expression, act, budget)).toBe(true);
    // The Kubernetes libraries are there (regex, quantity).
    expect(await evaluate(p.validations[2]!.expression, act, budget)).toBe(true);
    const small = { remaining: 50 };
    await expect(evaluate(p.validations[0]!.expression, act, small)).rejects.toThrow('validation failed due to running out of cost budget, no further validation rules will be run');
    expect(small.remaining).toBe(0);
    await expect(evaluate(p.validations[1]!.expression, act, small)).rejects.toThrow('running out of cost budget');
  });

  it('refuses at compile time an expression over budget whatever its input, and only that', () => {
    const range = `[${Array.from({ length: 100 }, (_, i) => i).join(',')}]`;
    const p = compilePolicy({
      metadata: { name: 'p' },
      spec: {
        validations: [
          // 100 × 100 × 100 iterations of a body costing more than 1: over the per-call limit on every request.
          { expression: `${range}.all(i, ${range}.all(j, ${range}.all(k, i + j + k >= 0)))` },
          // Two levels: 10,000 iterations, well inside.
          { expression: `${range}.all(i, ${range}.all(j, i + j >= 0))` },
          // Unbounded in the input, but cheap on a small object: left to the runtime limit, as upstream does.
          { expression: 'object.items.all(x, object.items.all(y, x + y >= 0))' },
        ],
      },
    });
    expect(p.validations[0]!.expression.error).toMatch(/^spec\.validations\[0\]\.expression: Forbidden: estimated rule cost exceeds budget by factor of \d+\.\dx/);
    expect(p.validations[1]!.expression.error).toBeUndefined();
    expect(p.validations[2]!.expression.error).toBeUndefined();
    expect(p.errors).toHaveLength(1);
  });

  it('leaves doubles and strings alone in toCel', () => {
    expect(toCel({ a: 1, b: 1.5, c: ['x', 2], d: null })).toEqual({ a: 1n, b: 1.5, c: ['x', 2n], d: null });
  });

  it('copies in toCel only what leads to an integer, and never changes its input', () => {
    const input = { metadata: { name: 'n', labels: { a: 'b' } }, spec: { replicas: 2, template: { spec: { containers: [{ name: 'c', ports: [{ containerPort: 80 }] }, { name: 'd' }] } } } };
    const before = structuredClone(input);
    const out = toCel(input) as typeof input;
    expect(input).toEqual(before);
    expect(out).toEqual({ metadata: { name: 'n', labels: { a: 'b' } }, spec: { replicas: 2n, template: { spec: { containers: [{ name: 'c', ports: [{ containerPort: 80n }] }, { name: 'd' }] } } } });
    // Shared: the parts without integers are the input's own objects.
    expect(out.metadata).toBe(input.metadata);
    expect(out.spec.template.spec.containers[1]).toBe(input.spec.template.spec.containers[1]);
    expect(out.spec).not.toBe(input.spec);
    expect(out.spec.template.spec.containers[0]).not.toBe(input.spec.template.spec.containers[0]);
    const plain = { a: 'x', b: [true, null, 1.5] };
    expect(toCel(plain)).toBe(plain);
    // A member named __proto__ (JSON.parse makes it an own one) stays a member, converted.
    const odd = JSON.parse('{"__proto__": {"n": 1}, "m": 2}') as Record<string, unknown>;
    const oddOut = toCel(odd) as Record<string, unknown>;
    expect(Object.getPrototypeOf(oddOut)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(oddOut, '__proto__')?.value).toEqual({ n: 1n });
    expect(oddOut.m).toBe(2n);
  });

  it('binds activations and evaluates expressions without promises unless one asks the authorizer', async () => {
    const p = compilePolicy({ metadata: { name: 'p' }, spec: { variables: [{ name: 'r', expression: 'object.spec.replicas' }], validations: [{ expression: 'variables.r == 3' }] } });
    const act = base({ spec: { replicas: 3 } }) as Activation;
    const bound = bindVariables(p, act);
    expect(bound).not.toBeInstanceOf(Promise);
    act.variables = bound as Activation['variables'];
    expect(evaluateNow(p.validations[0]!.expression, act, { remaining: 1000 })).toBe(true);
    // No variables: the empty object, shared.
    const none = compilePolicy({ metadata: { name: 'q' }, spec: { validations: [{ expression: 'true' }] } });
    expect(bindVariables(none, base({}))).toEqual({});
    // A variable that asks the authorizer is computed up front: a promise.
    const asking = compilePolicy({ metadata: { name: 'a' }, spec: { variables: [{ name: 'ok', expression: "authorizer.group('').resource('pods').check('get').allowed()" }], validations: [{ expression: 'variables.ok' }] } });
    expect(asking.variables[0]!.expr.async).toBe(true);
    expect(() => evaluateNow(asking.variables[0]!.expr, act)).toThrow(/uses authorizer/);
    const pending = bindVariables(asking, { ...base({}), authorizer: null });
    expect(pending).toBeInstanceOf(Promise);
    await pending;
  });
});
