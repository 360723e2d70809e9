// internal/auth/token-file owns static bearer tokens (--token-auth-file): the file is read once
// at start, as upstream's tokenfile authenticator reads it: CSV records of at least three
// fields (token, user name, uid), an optional fourth holding comma-separated groups (further
// fields are ignored), an empty token skipped and a repeated token won by its last line. A
// malformed file is an error naming the file and the line. Tokens live until restart.
// Imports: authenticator, token-authenticator, csv, user.

import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { parseCsv, CsvError } from './csv.js';
import type { TokenAuthenticator } from './token-authenticator.js';
import type { UserInfo } from './user.js';

export class TokenFileError extends Error {
  override name = 'TokenFileError';
}

/** The users of a token file's text, keyed by the SHA-256 of the token. */
export function parseTokenFile(text: string, path: string): { users: Map<string, UserInfo>; warnings: string[] } {
  let records;
  try {
    records = parseCsv(text);
  } catch (e) {
    if (e instanceof CsvError) throw new TokenFileError(`token file '${path}': ${e.message}`);
    throw e;
  }
  const users = new Map<string, UserInfo>();
  const warnings: string[] = [];
  for (const r of records) {
    if (r.fields.length < 3) {
      throw new TokenFileError(`token file '${path}' line ${r.line}: must have at least 3 columns (token, user name, user uid), found ${r.fields.length}`);
    }
    const [token, name, uid, groups] = r.fields as [string, string, string, string | undefined];
    if (token === '') {
      warnings.push(`empty token in token file '${path}' line ${r.line}: skipped`);
      continue;
    }
    const key = digest(token);
    if (users.has(key)) warnings.push(`duplicate token in token file '${path}' line ${r.line}: the later line wins`);
    users.set(key, { name, uid, groups: groups === undefined ? [] : groups.split(',') });
  }
  return { users, warnings };
}

const digest = (token: string): string => createHash('sha256').update(token).digest('hex');

export function tokenFileAuthenticator(path: string, warn: (message: string) => void = () => {}): TokenAuthenticator {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new TokenFileError(`token file '${path}': ${e instanceof Error ? e.message : String(e)}`);
  }
  const { users, warnings } = parseTokenFile(text, path);
  warnings.forEach(warn);
  return {
    name: 'token-file',
    authenticateToken(token: string): UserInfo | null {
      // Looked up by digest: the map never holds the raw tokens, and a lookup's timing says
      // nothing about how much of a guessed token was right.
      return users.get(digest(token)) ?? null;
    },
  };
}
