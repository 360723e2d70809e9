// internal/auth/jwt/claims-cel owns the CEL expressions of the structured authentication
// configuration: compiling them once at load (a syntax error names the field), evaluating them
// over `claims` or `user`, and checking the result's type. Errors never repeat the variables:
// cel-js puts the whole context into some messages, and claims do not belong in logs.
// Imports: nothing from the project (cel-js).

import { evaluate, parse, type ParseResult } from 'cel-js';

export class CelCompileError extends Error {
  override name = 'CelCompileError';
}

export class CelRuntimeError extends Error {
  override name = 'CelRuntimeError';
}

export interface CompiledExpression {
  readonly source: string;
  readonly path: string;
  /** Evaluates with the given variables; throws CelRuntimeError (message without the variables). */
  run(variables: Record<string, unknown>): unknown;
}

type Cst = Extract<ParseResult, { isSuccess: true }>['cst'];

/** Compiles `source`; a syntax error is a CelCompileError naming `path`. */
export function compileExpression(source: string, path: string): CompiledExpression {
  if (source.trim() === '') throw new CelCompileError(`${path}: Required value: expression must not be empty`);
  let parsed: ParseResult;
  try {
    parsed = parse(source);
  } catch (e) {
    throw new CelCompileError(`${path}: Invalid value: ${JSON.stringify(source)}: compilation failed: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!parsed.isSuccess) {
    throw new CelCompileError(`${path}: Invalid value: ${JSON.stringify(source)}: compilation failed: ${parsed.errors.map((m) => m.split('\n')[0]).join('; ')}`);
  }
  const cst: Cst = parsed.cst;
  return {
    source,
    path,
    run(variables) {
      try {
        return evaluate(cst, variables);
      } catch (e) {
        throw new CelRuntimeError(`${path}: evaluation failed: ${safeMessage(e)}`);
      }
    },
  };
}

/** The first line of cel-js's message with any echoed context cut off. */
function safeMessage(e: unknown): string {
  const m = (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
  const cut = m.indexOf(' in context');
  const short = cut >= 0 ? m.slice(0, cut) : m;
  return short.length > 200 ? `${short.slice(0, 200)}…` : short;
}

export function expectBoolean(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') throw new CelRuntimeError(`${path}: expression must return a boolean, got ${typeName(value)}`);
  return value;
}

export function expectString(value: unknown, path: string): string {
  if (typeof value !== 'string') throw new CelRuntimeError(`${path}: expression must return a string, got ${typeName(value)}`);
  return value;
}

/** A string or a list of strings, as groups and extra values may be. */
export function expectStrings(value: unknown, path: string): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  throw new CelRuntimeError(`${path}: expression must return a string or a list of strings, got ${typeName(value)}`);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'object') return 'map';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'double';
  return typeof v;
}

/** Whether the expression reads `claims.<name>` (or `claims["<name>"]`). */
export function referencesClaim(source: string, name: string): boolean {
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`\\bclaims\\s*\\.\\s*${esc}(?![A-Za-z0-9_])|\\bclaims\\s*\\[\\s*(['"])${esc}\\1\\s*\\]`).test(source);
}
