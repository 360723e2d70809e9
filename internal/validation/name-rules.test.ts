import { describe, expect, it } from 'vitest';
import {
  ipFamilyOf,
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isEnvVarName,
  isLabelValue,
  isPathSegmentName,
  isQualifiedName,
  isValidCIDR,
  isValidPortName,
} from './name-rules.js';

describe('name rules', () => {
  it.each([
    [isDNS1123Subdomain, 'my-app.example.com', true],
    [isDNS1123Subdomain, 'My-App', false],
    [isDNS1123Subdomain, 'a'.repeat(254), false],
    [isDNS1123Label, 'web-1', true],
    [isDNS1123Label, 'a.b', false],
    [isDNS1123Label, '1abc', true],
    [isDNS1035Label, '1abc', false],
    [isDNS1035Label, 'abc-1', true],
    [isPathSegmentName, 'Any Name:x', true],
    [isPathSegmentName, 'a/b', false],
    [isPathSegmentName, '..', false],
    [isQualifiedName, 'app.kubernetes.io/name', true],
    [isQualifiedName, 'MyKey_1', true],
    [isQualifiedName, '/name', false],
    [isQualifiedName, 'a/b/c', false],
    [isQualifiedName, 'Example.COM/x', false],
    [isQualifiedName, 'x'.repeat(64), false],
    [isLabelValue, '', true],
    [isLabelValue, 'v1.2_3-x', true],
    [isLabelValue, '-bad', false],
    [isLabelValue, 'x'.repeat(64), false],
    [isConfigMapKey, 'app.properties', true],
    [isConfigMapKey, 'a/b', false],
    [isConfigMapKey, '..secret', false],
    [isValidPortName, 'http', true],
    [isValidPortName, 'http--x', false],
    [isValidPortName, '8080', false],
    [isValidPortName, 'a-very-long-port-name', false],
    [isEnvVarName, 'MY_VAR.1', true],
    [isEnvVarName, 'A=B', false],
    [isValidCIDR, '10.0.0.0/8', true],
    [isValidCIDR, 'fd00::/64', true],
    [isValidCIDR, '10.0.0.0/33', false],
  ] as Array<[(v: string) => string[], string, boolean]>)('%o(%j) valid=%s', (fn, value, ok) => {
    expect(fn(value).length === 0).toBe(ok);
  });

  it('words messages as upstream does', () => {
    expect(isDNS1123Label('a.b')).toEqual(['must not contain dots']);
    expect(isDNS1123Subdomain('Foo')[0]).toBe(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
    expect(isQualifiedName('bad key')[0]).toMatch(/^name part must consist of alphanumeric characters/);
    expect(isLabelValue('x'.repeat(64))[0]).toBe('must be no more than 63 characters');
  });

  it('tells IP families apart', () => {
    expect(ipFamilyOf('10.1.2.3')).toBe('IPv4');
    expect(ipFamilyOf('010.1.2.3')).toBeUndefined();
    expect(ipFamilyOf('2001:db8::1')).toBe('IPv6');
    expect(ipFamilyOf('::ffff:10.0.0.1')).toBe('IPv6');
    expect(ipFamilyOf('1:2:3:4:5:6:7:8:9')).toBeUndefined();
    expect(ipFamilyOf('None')).toBeUndefined();
  });
});

describe('isQualifiedName remembers names that passed', () => {
  it.each([
    ['app', 0],
    ['example.com/team', 0],
    ['bad key', 1],
    ['Example.COM/x', 1],
    ['/name', 1],
  ])('answers %j the same on every call (%i messages)', (value, messages) => {
    const first = isQualifiedName(value);
    expect(first).toHaveLength(messages);
    for (let i = 0; i < 3; i++) expect(isQualifiedName(value)).toEqual(first);
  });

  it('hands each caller its own result array', () => {
    const a = isQualifiedName('app');
    a.push('changed by a caller');
    expect(isQualifiedName('app')).toEqual([]);
  });

  it('keeps answering correctly past its bound', () => {
    for (let i = 0; i < 5000; i++) expect(isQualifiedName(`key-${i}`)).toEqual([]);
    expect(isQualifiedName('-bad-')).toHaveLength(1);
  });
});
