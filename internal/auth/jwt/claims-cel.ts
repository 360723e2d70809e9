// internal/auth/jwt/claims-cel owns the CEL environments of the structured authentication
// configuration: claim rules and mappings see `claims` (the token's payload), user validation
// rules see `user` (username, uid, groups, extra); each compiles only against its own variable,
// as upstream's. It also tells which claims an expression reads (the email_verified rule).
// Imports: cel.

import { celEnvironment, compileExpression, type CompiledExpression } from '../../cel/cel.js';

const ENVIRONMENTS = { claims: celEnvironment({ claims: 'map' }), user: celEnvironment({ user: 'map' }) };

/** Compiles a claims (`claims`) or user-validation (`user`) expression; see compileExpression. */
export function compileAuthnExpression(scope: keyof typeof ENVIRONMENTS, source: string, path: string, want?: readonly string[]): CompiledExpression {
  return compileExpression(ENVIRONMENTS[scope], source, path, want);
}

/** Whether the expression reads `claims.<name>` (or `claims["<name>"]`). */
export function referencesClaim(source: string, name: string): boolean {
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`\\bclaims\\s*\\.\\s*${esc}(?![A-Za-z0-9_])|\\bclaims\\s*\\[\\s*(['"])${esc}\\1\\s*\\]`).test(source);
}
