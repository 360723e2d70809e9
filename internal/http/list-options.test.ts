// Continue tokens and list parameter errors (spec §4.5, §4.6, §7) with upstream's messages.
import { describe, it, expect } from 'vitest';
import { StatusError } from '../apierrors/status.js';
import { decodeContinue, encodeContinue, listParams } from './list-options.js';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64url');

function badRequest(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(StatusError);
    expect((e as StatusError).status).toMatchObject({ code: 400, reason: 'BadRequest' });
    return (e as StatusError).status.message;
  }
  throw new Error('expected a 400');
}

describe('continue tokens', () => {
  it('round-trips, including the -1 revision of an expired token', () => {
    for (const t of [{ revision: 7, afterKey: 'ns/x' }, { revision: -1, afterKey: 'a' }]) expect(decodeContinue(encodeContinue(t))).toEqual(t);
  });

  it.each([
    ['not base64', 'garbage!!', /^invalid continue token: continue key is not valid: illegal base64 data/],
    ['not JSON', b64('foo'), /^invalid continue token: continue key is not valid: /],
    ['a JSON array', b64('[1]'), /^invalid continue token: continue key is not valid: /],
    ['another version', b64('{"v":"other","rv":3,"start":"a"}'), /^invalid continue token: continue key is not valid: server does not recognize this encoded version other$/],
    ['rv 0', b64('{"v":"meta/v1","rv":0,"start":"a"}'), /^invalid continue token: continue key is not valid: incorrect encoded start resourceVersion/],
    ['rv not a number', b64('{"v":"meta/v1","rv":"x","start":"a"}'), /incorrect encoded start resourceVersion/],
    ['empty start', b64('{"v":"meta/v1","rv":3,"start":""}'), /^invalid continue token: continue key is not valid: encoded start key empty/],
    ['path traversal', b64('{"v":"meta/v1","rv":3,"start":"../x"}'), /^invalid continue token: continue key is not valid: \.\.\/x$/],
  ])('rejects %s with 400 and upstream\'s message form', (_what, token, message) => {
    expect(badRequest(() => decodeContinue(token))).toMatch(message);
  });
});

describe('list parameter errors', () => {
  const q = (s: string) => new URLSearchParams(s);
  it('parses limit as strconv.ParseInt does: a leading sign is fine, an empty value is a 400', () => {
    expect(listParams(q('limit=%2B5')).limit).toBe(5);
    expect(listParams(q('limit=-5')).limit).toBe(0);
    expect(listParams(q('')).limit).toBe(0);
    expect(badRequest(() => listParams(q('limit=')))).toBe('invalid limit "": must be an integer');
  });
  it.each([
    ['resourceVersionMatch=Sometimes&resourceVersion=5', 'resourceVersionMatch: Unsupported value: "Sometimes": supported values: "Exact", "NotOlderThan", ""'],
    ['resourceVersionMatch=Exact&resourceVersion=0', 'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'],
    ['resourceVersionMatch=Exact', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided'],
    ['resourceVersion=5&limit=1&continue=x', 'specifying resource version is not allowed when using continue'],
    ['resourceVersion=abc', 'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'],
    ['resourceVersion=-1&limit=5', 'invalid resource version: resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax'],
    ['resourceVersion=99999999999999999999', 'invalid resource version: resourceVersion: Invalid value: "99999999999999999999": strconv.ParseUint: parsing "99999999999999999999": value out of range'],
    ['sendInitialEvents=true', 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list'],
    ['sendInitialEvents=false&limit=5', 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list'],
    ['sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=0', 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list'],
  ])('%s → 400 %j', (query, message) => {
    expect(badRequest(() => listParams(q(query)))).toBe(message);
  });
});
