import { describe, expect, it } from 'vitest';
import { CelCompileError, CelRuntimeError, celEnvironment, compileExpression, expectBoolean, expectStrings } from './cel.js';

const env = celEnvironment({ claims: 'map', name: 'string' });

describe('compileExpression', () => {
  it.each<[string, string, readonly string[] | undefined, RegExp]>([
    ['empty', '  ', undefined, /^p: Required value: expression must not be empty$/],
    ['syntax', 'claims.', undefined, /^p: Invalid value: "claims\.": compilation failed: /],
    ['undeclared variable', 'request.user == "a"', undefined, /compilation failed: .*request/],
    ['type error', 'name + 1', undefined, /compilation failed: no such overload: string \+ int/],
    ['wrong result type', 'name', ['bool'], /compilation failed: must evaluate to one of bool, not string/],
  ])('refuses %s at load, naming the field', (_what, source, want, message) => {
    expect(() => compileExpression(env, source, 'p', want)).toThrow(CelCompileError);
    expect(() => compileExpression(env, source, 'p', want)).toThrow(message);
  });

  it('runs the standard library, macros and optional types', () => {
    const run = (source: string) => compileExpression(env, source, 'p').run({ claims: { email: 'Ada@Example.com', roles: ['a', 'b'] }, name: 'n' });
    expect(run('claims.email.split("@")[1].lowerAscii()')).toBe('example.com');
    expect(run('claims.roles.exists(r, r == "b") && claims.email.matches("^[A-Z]")')).toBe(true);
    expect(run('claims.?missing.orValue("none")')).toBe('none');
    // cel.bind (upstream's base environment has the bindings extension since 1.27).
    expect(run('cel.bind(parts, claims.email.split("@"), parts[0] + "/" + parts[1])')).toBe('Ada/Example.com');
    expect(run('cel.bind(r, claims.roles, r.all(x, x.size() == 1) && size(r) == 2)')).toBe(true);
    expect(compileExpression(env, 'name == "n"', 'p', ['bool']).type).toBe('bool');
  });

  it('reports a runtime failure without the variables, and evaluates async functions only through runAsync', async () => {
    const e = compileExpression(env, 'claims.secret.size() > claims.missing', 'p');
    expect(() => e.run({ claims: { secret: 'hunter2' } })).toThrow(CelRuntimeError);
    try {
      e.run({ claims: { secret: 'hunter2' } });
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter2');
    }
    const asyncEnv = celEnvironment({ x: 'string' }).registerFunction('slowUpper(string): string', async (s: string) => s.toUpperCase());
    const a = compileExpression(asyncEnv, 'slowUpper(x) == "AB"', 'q', ['bool']);
    expect(() => a.run({ x: 'ab' })).toThrow(/needs asynchronous evaluation/);
    expect(await a.runAsync({ x: 'ab' })).toBe(true);
  });

  it('checks result types', () => {
    expect(expectBoolean(true, 'p')).toBe(true);
    expect(() => expectBoolean(1n, 'p')).toThrow(/must return a boolean, got int/);
    expect(expectStrings('a', 'p')).toEqual(['a']);
    expect(expectStrings('', 'p')).toEqual([]);
    expect(() => expectStrings([1.5], 'p')).toThrow(/got list/);
  });
});
