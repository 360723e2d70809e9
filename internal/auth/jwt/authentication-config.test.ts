import { describe, it, expect } from 'vitest';
import { AuthenticationConfigError, MAX_JWT_AUTHENTICATORS, parseAuthenticationConfig } from './authentication-config.js';

const GROUP = 'apiserver.config.cluster.io';

const issuer = (i: number, body = '  claimMappings:\n    username: { claim: sub, prefix: "" }\n') =>
  `- issuer:\n    url: https://issuer-${i}.example\n    audiences: [a]\n${body}`;

const doc = (jwt: string, extra = '') => `apiVersion: ${GROUP}/v1\nkind: AuthenticationConfiguration\njwt:\n${jwt}${extra}`;

const problems = (text: string, options: Partial<Parameters<typeof parseAuthenticationConfig>[1]> = {}): string[] => {
  try {
    parseAuthenticationConfig(text, { group: GROUP, ...options });
  } catch (e) {
    expect(e).toBeInstanceOf(AuthenticationConfigError);
    return (e as AuthenticationConfigError).problems;
  }
  return [];
};

describe('AuthenticationConfiguration loading', () => {
  it('accepts 64 issuers and refuses 65', () => {
    const many = (n: number) => doc(Array.from({ length: n }, (_, i) => issuer(i)).join(''));
    expect(parseAuthenticationConfig(many(MAX_JWT_AUTHENTICATORS), { group: GROUP }).jwt).toHaveLength(64);
    expect(problems(many(65))).toEqual(['jwt: Too many: 65: must have at most 64 items']);
  });

  it('accepts v1alpha1, v1beta1 and v1 of the naming\'s group only', () => {
    for (const v of ['v1alpha1', 'v1beta1', 'v1']) expect(problems(doc(issuer(0)).replace('/v1\n', `/${v}\n`))).toEqual([]);
    expect(problems(doc(issuer(0)).replace(GROUP, 'apiserver.config.k8s.io'))[0]).toMatch(/^apiVersion: Unsupported value/);
    expect(problems(doc(issuer(0)).replace(GROUP, 'apiserver.config.k8s.io'), { group: 'apiserver.config.k8s.io' })).toEqual([]);
  });

  it.each<[string, string, string]>([
    ['duplicate issuer', issuer(1) + issuer(1), 'jwt[1].issuer.url: Duplicate value: "https://issuer-1.example"'],
    ['http issuer', issuer(0).replace('https://', 'http://'), 'jwt[0].issuer.url: Invalid value: "http://issuer-0.example": URL scheme must be https'],
    ['discoveryURL equal to url', issuer(0).replace('    audiences', '    discoveryURL: https://issuer-0.example/\n    audiences'), 'jwt[0].issuer.discoveryURL: Invalid value: "https://issuer-0.example/": discoveryURL must be different from URL'],
    ['no audiences', issuer(0).replace('    audiences: [a]\n', ''), 'jwt[0].issuer.audiences: Required value: at least one issuer.audiences is required'],
    ['two audiences without MatchAny', issuer(0).replace('[a]', '[a, b]'), 'jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences'],
    ['bad CA', issuer(0).replace('    audiences', '    certificateAuthority: nope\n    audiences'), 'jwt[0].issuer.certificateAuthority: Invalid value: "<omitted>": data does not contain any valid RSA or ECDSA certificates'],
    ['username claim without prefix', issuer(0, '  claimMappings:\n    username: { claim: sub }\n'), 'jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing'],
    ['username claim and expression', issuer(0, '  claimMappings:\n    username: { claim: sub, prefix: "", expression: claims.sub }\n'), 'jwt[0].claimMappings.username: Invalid value: claim and expression can\'t both be set'],
    ['username expression with prefix', issuer(0, '  claimMappings:\n    username: { expression: claims.sub, prefix: x }\n'), 'jwt[0].claimMappings.username.prefix: Invalid value: prefix can\'t be set when expression is set'],
    ['no username', issuer(0, '  claimMappings:\n    groups: { claim: g, prefix: "" }\n'), 'jwt[0].claimMappings.username: Required value: claim or expression is required'],
    ['groups claim without prefix', issuer(0, '  claimMappings:\n    username: { claim: sub, prefix: "" }\n    groups: { claim: g }\n'), 'jwt[0].claimMappings.groups.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing'],
    ['CEL syntax error', issuer(0, '  claimMappings:\n    username: { expression: "claims.(" }\n'), 'jwt[0].claimMappings.username.expression: Invalid value: "claims.(": compilation failed'],
    ['CEL syntax error in a rule', issuer(0, '  claimValidationRules:\n  - expression: "1 +"\n  claimMappings:\n    username: { claim: sub, prefix: "" }\n'), 'jwt[0].claimValidationRules[0].expression: Invalid value: "1 +": compilation failed'],
    ['claim rule with message', issuer(0, '  claimValidationRules:\n  - claim: hd\n    requiredValue: x\n    message: m\n  claimMappings:\n    username: { claim: sub, prefix: "" }\n'), 'jwt[0].claimValidationRules[0].message: Invalid value: message can\'t be set when claim is set'],
    ['email username without email_verified', issuer(0, '  claimMappings:\n    username: { expression: claims.email }\n'), 'jwt[0].claimMappings.username.expression: Invalid value: claims.email_verified must be used'],
    ['extra key under a reserved domain', issuer(0, '  claimMappings:\n    username: { claim: sub, prefix: "" }\n    extra:\n    - key: example.kubernetes.io/x\n      valueExpression: claims.sub\n'), 'jwt[0].claimMappings.extra[0].key: Invalid value: "example.kubernetes.io/x": k8s.io, kubernetes.io and their subdomains are reserved'],
    ['extra key not lowercase', issuer(0, '  claimMappings:\n    username: { claim: sub, prefix: "" }\n    extra:\n    - key: example.com/X\n      valueExpression: claims.sub\n'), 'jwt[0].claimMappings.extra[0].key: Invalid value: "example.com/X": key must be lowercase'],
    ['unknown field', issuer(0).replace('    audiences', '    audience: x\n    audiences'), 'jwt[0].issuer.audience: unknown field'],
  ])('refuses %s with the field path', (_name, jwt, message) => {
    expect(problems(doc(jwt)).join('\n')).toContain(message);
  });

  it('allows an email username when email_verified is checked in a rule', () => {
    const body = '  claimValidationRules:\n  - expression: claims.email_verified == true\n  claimMappings:\n    username: { expression: claims.email }\n';
    expect(problems(doc(issuer(0, body)))).toEqual([]);
  });

  it('refuses an issuer that is the service-account issuer', () => {
    expect(problems(doc(issuer(0)), { serviceAccountIssuers: ['https://issuer-0.example'] })[0]).toMatch(/must not overlap with disallowed issuers/);
  });

  it('reads anonymous with path conditions', () => {
    const c = parseAuthenticationConfig(doc(issuer(0), 'anonymous:\n  enabled: true\n  conditions:\n  - path: /livez\n  - path: /readyz\n'), { group: GROUP });
    expect(c.anonymous).toEqual({ enabled: true, paths: ['/livez', '/readyz'] });
    expect(problems(doc(issuer(0), 'anonymous:\n  enabled: false\n  conditions:\n  - path: /livez\n'))).toEqual(['anonymous.conditions: Invalid value: enabled should be set to true when conditions are defined']);
    expect(parseAuthenticationConfig(`apiVersion: ${GROUP}/v1\nkind: AuthenticationConfiguration\n`, { group: GROUP })).toEqual({ jwt: [], anonymous: undefined });
  });

  it('lists every problem at once', () => {
    expect(problems(doc(issuer(0).replace('https://', 'http://') + issuer(1, '  claimMappings: {}\n')))).toHaveLength(2);
  });
});
