// internal/auth/jwt/authentication-config owns the AuthenticationConfiguration document
// (--authentication-config) and the legacy --oidc-* flags: decoding, validating every field
// with its path (all errors at once, as upstream lists them), compiling the CEL expressions,
// and the flags' translation into the same JWT authenticator shape. What a loaded
// configuration does with a token belongs to jwt-authenticator.
// Imports: claims-cel (js-yaml for the file).

import type { ServerConfig } from '../../config/flags.js';
import { X509Certificate } from 'node:crypto';
import { load } from 'js-yaml';
import { CelCompileError, type CompiledExpression } from '../../cel/cel.js';
import { compileAuthnExpression, referencesClaim } from './claims-cel.js';

export const MAX_JWT_AUTHENTICATORS = 64;
export const CONFIG_KIND = 'AuthenticationConfiguration';
/** The versions upstream 1.32 accepts, and v1 (the spec's version). */
export const CONFIG_VERSIONS = ['v1alpha1', 'v1beta1', 'v1'] as const;

/** Algorithms a JWT issuer may sign with: asymmetric only (never `none`, never HMAC). */
export const SUPPORTED_SIGNING_ALGS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'] as const;

export type ClaimOrExpression =
  | { kind: 'claim'; claim: string; prefix: string }
  | { kind: 'expression'; expression: CompiledExpression };

export type ClaimValidationRule =
  | { kind: 'claim'; claim: string; requiredValue: string }
  | { kind: 'expression'; expression: CompiledExpression; message: string };

export interface JwtAuthenticatorConfig {
  issuerUrl: string;
  discoveryUrl: string | undefined;
  /** PEM bundle; undefined means the system's roots. */
  certificateAuthority: string | undefined;
  audiences: string[];
  signingAlgs: readonly string[];
  claimValidationRules: ClaimValidationRule[];
  username: ClaimOrExpression;
  groups: ClaimOrExpression | undefined;
  uid: { kind: 'claim'; claim: string } | { kind: 'expression'; expression: CompiledExpression } | undefined;
  extra: Array<{ key: string; valueExpression: CompiledExpression }>;
  userValidationRules: Array<{ expression: CompiledExpression; message: string }>;
  /** The email rule of the flags (and a `claim: email` username): email_verified, when present, must be true. */
  checkEmailVerified: boolean;
}

export interface AnonymousConfig {
  enabled: boolean;
  /** Paths reachable anonymously; empty means every path. */
  paths: string[];
}

export interface AuthenticationConfig {
  jwt: JwtAuthenticatorConfig[];
  /** Set when the file has an `anonymous` section (then --anonymous-auth must not be given). */
  anonymous: AnonymousConfig | undefined;
}

export class AuthenticationConfigError extends Error {
  override name = 'AuthenticationConfigError';
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
  }
}

export interface LoadOptions {
  /** `apiserver.config.cluster.io` or `apiserver.config.k8s.io` (per --naming). */
  group: string;
  /** Issuers of the service-account tokens: a JWT issuer must not reuse one. */
  serviceAccountIssuers?: readonly string[];
  /** Domains whose subdomains extra keys must not use. */
  reservedDomains?: readonly string[];
  /** StructuredAuthenticationConfigurationEgressSelector is on. */
  egressSelectorGate?: boolean;
}

type Mapping = Record<string, unknown>;
const isMapping = (v: unknown): v is Mapping => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Decodes and validates the file's text; throws AuthenticationConfigError listing every problem. */
export function parseAuthenticationConfig(text: string, options: LoadOptions): AuthenticationConfig {
  let doc: unknown;
  try {
    doc = load(text);
  } catch (e) {
    throw new AuthenticationConfigError([`not valid YAML or JSON: ${(e as Error).message.split('\n')[0]}`]);
  }
  const v = new Validator();
  if (!isMapping(doc)) throw new AuthenticationConfigError(['expected a mapping with apiVersion and kind AuthenticationConfiguration']);
  const accepted = CONFIG_VERSIONS.map((ver) => `${options.group}/${ver}`);
  if (!accepted.includes(String(doc['apiVersion']))) v.err('apiVersion', `Unsupported value: ${JSON.stringify(doc['apiVersion'])}: supported values: ${accepted.map((a) => `"${a}"`).join(', ')}`);
  if (doc['kind'] !== CONFIG_KIND) v.err('kind', `Unsupported value: ${JSON.stringify(doc['kind'])}: supported values: "${CONFIG_KIND}"`);
  v.known(doc, '', ['apiVersion', 'kind', 'jwt', 'anonymous']);

  const jwt: JwtAuthenticatorConfig[] = [];
  const jwtList = doc['jwt'] ?? [];
  if (!Array.isArray(jwtList)) v.err('jwt', 'Invalid value: must be a list');
  else {
    if (jwtList.length > MAX_JWT_AUTHENTICATORS) v.err('jwt', `Too many: ${jwtList.length}: must have at most ${MAX_JWT_AUTHENTICATORS} items`);
    const issuers = new Set<string>();
    const discoveryUrls = new Set<string>();
    jwtList.forEach((item, i) => {
      const a = parseJwtAuthenticator(item, `jwt[${i}]`, v, options);
      if (!a) return;
      if (issuers.has(a.issuerUrl)) v.err(`jwt[${i}].issuer.url`, `Duplicate value: ${JSON.stringify(a.issuerUrl)}`);
      issuers.add(a.issuerUrl);
      if (a.discoveryUrl) {
        if (discoveryUrls.has(a.discoveryUrl)) v.err(`jwt[${i}].issuer.discoveryURL`, `Duplicate value: ${JSON.stringify(a.discoveryUrl)}`);
        discoveryUrls.add(a.discoveryUrl);
      }
      jwt.push(a);
    });
  }

  let anonymous: AnonymousConfig | undefined;
  if (doc['anonymous'] !== undefined) {
    const an = doc['anonymous'];
    if (!isMapping(an)) v.err('anonymous', 'Invalid value: must be a mapping');
    else {
      v.known(an, 'anonymous', ['enabled', 'conditions']);
      if (typeof an['enabled'] !== 'boolean') v.err('anonymous.enabled', 'Required value: must be true or false');
      const enabled = an['enabled'] === true;
      const paths: string[] = [];
      const conds = an['conditions'] ?? [];
      if (!Array.isArray(conds)) v.err('anonymous.conditions', 'Invalid value: must be a list');
      else {
        if (!enabled && conds.length > 0) v.err('anonymous.conditions', 'Invalid value: enabled should be set to true when conditions are defined');
        conds.forEach((c, i) => {
          const at = `anonymous.conditions[${i}]`;
          if (!isMapping(c)) return v.err(at, 'Invalid value: must be a mapping');
          v.known(c, at, ['path']);
          const p = c['path'];
          if (typeof p !== 'string' || p === '') return v.err(`${at}.path`, 'Required value: path is required');
          if (!p.startsWith('/')) return v.err(`${at}.path`, `Invalid value: ${JSON.stringify(p)}: must be an absolute path`);
          if (paths.includes(p)) return v.err(`${at}.path`, `Duplicate value: ${JSON.stringify(p)}`);
          paths.push(p);
        });
      }
      anonymous = { enabled, paths };
    }
  }
  v.throwIfAny();
  return { jwt, anonymous };
}

/** Result types a field's expression may have (the checker's inference; `dyn` is checked when it runs). */
const BOOL = ['bool'];
const STRING = ['string'];

function parseJwtAuthenticator(item: unknown, at: string, v: Validator, options: LoadOptions): JwtAuthenticatorConfig | undefined {
  if (!isMapping(item)) return v.err(at, 'Invalid value: must be a mapping');
  v.known(item, at, ['issuer', 'claimValidationRules', 'claimMappings', 'userValidationRules']);
  const issuer = item['issuer'];
  if (!isMapping(issuer)) return v.err(`${at}.issuer`, 'Required value');
  v.known(issuer, `${at}.issuer`, ['url', 'discoveryURL', 'certificateAuthority', 'audiences', 'audienceMatchPolicy', 'egressSelectorType']);
  const issuerUrl = v.str(issuer['url'], `${at}.issuer.url`, true) ?? '';
  if (issuerUrl) v.httpsUrl(issuerUrl, `${at}.issuer.url`);
  if (issuerUrl && options.serviceAccountIssuers?.includes(issuerUrl)) {
    v.err(`${at}.issuer.url`, `Invalid value: ${JSON.stringify(issuerUrl)}: issuer URL must not overlap with disallowed issuers: ${JSON.stringify(options.serviceAccountIssuers)}`);
  }
  const discoveryUrl = v.str(issuer['discoveryURL'], `${at}.issuer.discoveryURL`, false) || undefined;
  if (discoveryUrl) {
    v.httpsUrl(discoveryUrl, `${at}.issuer.discoveryURL`);
    if (discoveryUrl.replace(/\/$/, '') === issuerUrl.replace(/\/$/, '')) v.err(`${at}.issuer.discoveryURL`, `Invalid value: ${JSON.stringify(discoveryUrl)}: discoveryURL must be different from URL`);
  }
  const certificateAuthority = v.str(issuer['certificateAuthority'], `${at}.issuer.certificateAuthority`, false) || undefined;
  if (certificateAuthority) checkCertificates(certificateAuthority, `${at}.issuer.certificateAuthority`, v);
  const audiences: string[] = [];
  const auds = issuer['audiences'];
  if (!Array.isArray(auds) || auds.length === 0) v.err(`${at}.issuer.audiences`, 'Required value: at least one issuer.audiences is required');
  else
    auds.forEach((a, j) => {
      if (typeof a !== 'string' || a === '') return v.err(`${at}.issuer.audiences[${j}]`, 'Required value: audience can\'t be empty');
      if (audiences.includes(a)) return v.err(`${at}.issuer.audiences[${j}]`, `Duplicate value: ${JSON.stringify(a)}`);
      audiences.push(a);
    });
  const policy = issuer['audienceMatchPolicy'] ?? '';
  if (policy !== '' && policy !== 'MatchAny') v.err(`${at}.issuer.audienceMatchPolicy`, `Unsupported value: ${JSON.stringify(policy)}: supported values: "MatchAny"`);
  else if (audiences.length > 1 && policy !== 'MatchAny') v.err(`${at}.issuer.audienceMatchPolicy`, 'Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences');
  const egress = issuer['egressSelectorType'];
  if (egress !== undefined && egress !== '') {
    if (!options.egressSelectorGate) v.err(`${at}.issuer.egressSelectorType`, 'Invalid value: egressSelectorType requires the feature gate StructuredAuthenticationConfigurationEgressSelector');
    else if (egress !== 'controlplane' && egress !== 'cluster') v.err(`${at}.issuer.egressSelectorType`, `Unsupported value: ${JSON.stringify(egress)}: supported values: "cluster", "controlplane"`);
  }

  // Claim validation rules.
  const claimValidationRules: ClaimValidationRule[] = [];
  const cvr = item['claimValidationRules'] ?? [];
  const ruleClaims = new Set<string>();
  const celSources: string[] = [];
  if (!Array.isArray(cvr)) v.err(`${at}.claimValidationRules`, 'Invalid value: must be a list');
  else
    cvr.forEach((r, j) => {
      const rp = `${at}.claimValidationRules[${j}]`;
      if (!isMapping(r)) return v.err(rp, 'Invalid value: must be a mapping');
      v.known(r, rp, ['claim', 'requiredValue', 'expression', 'message']);
      const claim = v.str(r['claim'], `${rp}.claim`, false);
      const expression = v.str(r['expression'], `${rp}.expression`, false);
      if (claim && expression) return v.err(rp, 'Invalid value: claim and expression can\'t both be set');
      if (!claim && !expression) return v.err(rp, 'Required value: claim or expression is required');
      if (claim) {
        if (r['message'] !== undefined) v.err(`${rp}.message`, 'Invalid value: message can\'t be set when claim is set');
        if (ruleClaims.has(claim)) v.err(`${rp}.claim`, `Duplicate value: ${JSON.stringify(claim)}`);
        ruleClaims.add(claim);
        claimValidationRules.push({ kind: 'claim', claim, requiredValue: v.str(r['requiredValue'], `${rp}.requiredValue`, false) ?? '' });
      } else {
        if (r['requiredValue'] !== undefined) v.err(`${rp}.requiredValue`, 'Invalid value: requiredValue can\'t be set when expression is set');
        const compiled = v.cel(expression!, `${rp}.expression`, 'claims', BOOL);
        celSources.push(expression!);
        if (compiled) claimValidationRules.push({ kind: 'expression', expression: compiled, message: v.str(r['message'], `${rp}.message`, false) ?? '' });
      }
    });

  // Claim mappings.
  const cm = item['claimMappings'];
  let username: ClaimOrExpression | undefined;
  let groups: ClaimOrExpression | undefined;
  let uid: JwtAuthenticatorConfig['uid'];
  const extra: JwtAuthenticatorConfig['extra'] = [];
  let usernameSource: string | undefined;
  if (!isMapping(cm)) v.err(`${at}.claimMappings`, 'Required value');
  else {
    v.known(cm, `${at}.claimMappings`, ['username', 'groups', 'uid', 'extra']);
    if (cm['username'] === undefined) v.err(`${at}.claimMappings.username`, 'Required value: claim or expression is required');
    else {
      username = prefixedMapping(cm['username'], `${at}.claimMappings.username`, v, true);
      if (username?.kind === 'expression') usernameSource = username.expression.source;
    }
    if (cm['groups'] !== undefined) {
      groups = prefixedMapping(cm['groups'], `${at}.claimMappings.groups`, v, false);
      if (groups?.kind === 'expression') celSources.push(groups.expression.source);
    }
    if (cm['uid'] !== undefined) {
      const up = `${at}.claimMappings.uid`;
      const u = cm['uid'];
      if (!isMapping(u)) v.err(up, 'Invalid value: must be a mapping');
      else {
        v.known(u, up, ['claim', 'expression']);
        const claim = v.str(u['claim'], `${up}.claim`, false);
        const expression = v.str(u['expression'], `${up}.expression`, false);
        if (claim && expression) v.err(up, 'Invalid value: claim and expression can\'t both be set');
        else if (claim) uid = { kind: 'claim', claim };
        else if (expression) {
          const compiled = v.cel(expression, `${up}.expression`, 'claims', STRING);
          celSources.push(expression);
          if (compiled) uid = { kind: 'expression', expression: compiled };
        }
      }
    }
    const ex = cm['extra'] ?? [];
    if (!Array.isArray(ex)) v.err(`${at}.claimMappings.extra`, 'Invalid value: must be a list');
    else
      ex.forEach((e, j) => {
        const ep = `${at}.claimMappings.extra[${j}]`;
        if (!isMapping(e)) return v.err(ep, 'Invalid value: must be a mapping');
        v.known(e, ep, ['key', 'valueExpression']);
        const key = v.str(e['key'], `${ep}.key`, true);
        const expr = v.str(e['valueExpression'], `${ep}.valueExpression`, true);
        if (key) {
          const problem = extraKeyProblem(key, options.reservedDomains ?? ['kubernetes.io', 'k8s.io', 'cluster.io']);
          if (problem) v.err(`${ep}.key`, `Invalid value: ${JSON.stringify(key)}: ${problem}`);
          if (extra.some((x) => x.key === key)) v.err(`${ep}.key`, `Duplicate value: ${JSON.stringify(key)}`);
        }
        if (expr) {
          celSources.push(expr);
          const compiled = v.cel(expr, `${ep}.valueExpression`);
          if (compiled && key) extra.push({ key, valueExpression: compiled });
        }
      });
  }
  // As upstream: a username taken from claims.email by an expression must be checked against
  // claims.email_verified somewhere (the expression itself, the other mappings or a rule).
  if (usernameSource && referencesClaim(usernameSource, 'email') && ![usernameSource, ...celSources].some((s) => referencesClaim(s, 'email_verified'))) {
    v.err(`${at}.claimMappings.username.expression`, 'Invalid value: claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claimMappings.username.expression uses claims.email');
  }

  const userValidationRules: JwtAuthenticatorConfig['userValidationRules'] = [];
  const uvr = item['userValidationRules'] ?? [];
  if (!Array.isArray(uvr)) v.err(`${at}.userValidationRules`, 'Invalid value: must be a list');
  else
    uvr.forEach((r, j) => {
      const rp = `${at}.userValidationRules[${j}]`;
      if (!isMapping(r)) return v.err(rp, 'Invalid value: must be a mapping');
      v.known(r, rp, ['expression', 'message']);
      const expression = v.str(r['expression'], `${rp}.expression`, true);
      if (!expression) return;
      const compiled = v.cel(expression, `${rp}.expression`, 'user', BOOL);
      if (compiled) userValidationRules.push({ expression: compiled, message: v.str(r['message'], `${rp}.message`, false) ?? '' });
    });

  if (!username || !issuerUrl) return undefined;
  return {
    issuerUrl,
    discoveryUrl,
    certificateAuthority,
    audiences,
    signingAlgs: SUPPORTED_SIGNING_ALGS,
    claimValidationRules,
    username,
    groups,
    uid,
    extra,
    userValidationRules,
    checkEmailVerified: username.kind === 'claim' && username.claim === 'email',
  };
}

/** username/groups: `claim` (then `prefix` is required, may be empty) or `expression` (no prefix). */
function prefixedMapping(m: unknown, at: string, v: Validator, required: boolean): ClaimOrExpression | undefined {
  if (!isMapping(m)) return v.err(at, 'Invalid value: must be a mapping');
  v.known(m, at, ['claim', 'prefix', 'expression']);
  const claim = v.str(m['claim'], `${at}.claim`, false);
  const expression = v.str(m['expression'], `${at}.expression`, false);
  if (claim && expression) return v.err(at, 'Invalid value: claim and expression can\'t both be set');
  if (!claim && !expression) return required ? v.err(at, 'Required value: claim or expression is required') : undefined;
  if (claim) {
    if (m['prefix'] === undefined || m['prefix'] === null) return v.err(`${at}.prefix`, 'Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing');
    const prefix = v.str(m['prefix'], `${at}.prefix`, false) ?? '';
    return { kind: 'claim', claim, prefix };
  }
  if (m['prefix'] !== undefined) return v.err(`${at}.prefix`, 'Invalid value: prefix can\'t be set when expression is set');
  const compiled = v.cel(expression!, `${at}.expression`);
  return compiled ? { kind: 'expression', expression: compiled } : undefined;
}

/** Extra keys: a lowercase, domain-prefixed path, not under a reserved domain. */
function extraKeyProblem(key: string, reserved: readonly string[]): string | undefined {
  if (key !== key.toLowerCase()) return 'key must be lowercase';
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1) return 'must be a domain-prefixed path (such as "acme.io/foo")';
  const domain = key.slice(0, slash);
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/.test(domain)) return 'must be a domain-prefixed path (such as "acme.io/foo")';
  for (const r of reserved) if (domain === r || domain.endsWith(`.${r}`)) return `k8s.io, kubernetes.io and their subdomains are reserved (here: ${r})`;
  if (!/^[A-Za-z0-9/_.~%-]+$/.test(key.slice(slash + 1))) return 'the path must be a valid URL path segment';
  return undefined;
}

function checkCertificates(pem: string, at: string, v: Validator): void {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!blocks) return void v.err(at, 'Invalid value: "<omitted>": data does not contain any valid RSA or ECDSA certificates');
  for (const b of blocks) {
    try {
      new X509Certificate(b);
    } catch (e) {
      return void v.err(at, `Invalid value: "<omitted>": ${(e as Error).message}`);
    }
  }
}

class Validator {
  readonly problems: string[] = [];
  err(path: string, message: string): undefined {
    this.problems.push(`${path}: ${message}`);
    return undefined;
  }
  known(m: Mapping, at: string, keys: string[]): void {
    for (const k of Object.keys(m)) if (!keys.includes(k)) this.err(at ? `${at}.${k}` : k, 'unknown field');
  }
  str(value: unknown, path: string, required: boolean): string | undefined {
    if (value === undefined || value === null) return required ? this.err(path, 'Required value') : undefined;
    if (typeof value !== 'string') return this.err(path, `Invalid value: must be a string`);
    if (required && value === '') return this.err(path, 'Required value');
    return value;
  }
  httpsUrl(raw: string, path: string): void {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      return void this.err(path, `Invalid value: ${JSON.stringify(raw)}: not a valid URL`);
    }
    if (u.protocol !== 'https:') this.err(path, `Invalid value: ${JSON.stringify(raw)}: URL scheme must be https`);
    if (u.username || u.password) this.err(path, `Invalid value: ${JSON.stringify(raw)}: URL must not contain a username or password`);
    if (u.search || raw.includes('?')) this.err(path, `Invalid value: ${JSON.stringify(raw)}: URL must not contain a query`);
    if (u.hash || raw.includes('#')) this.err(path, `Invalid value: ${JSON.stringify(raw)}: URL must not contain a fragment`);
  }
  cel(source: string, path: string, scope: 'claims' | 'user' = 'claims', want?: readonly string[]): CompiledExpression | undefined {
    try {
      return compileAuthnExpression(scope, source, path, want);
    } catch (e) {
      if (e instanceof CelCompileError) {
        this.problems.push(e.message);
        return undefined;
      }
      throw e;
    }
  }
  throwIfAny(): void {
    if (this.problems.length > 0) throw new AuthenticationConfigError(this.problems);
  }
}

/** The --oidc-* flags. */
export type OidcFlags = ServerConfig['oidc'];

/** Whether any --oidc-* flag is set (then --authentication-config must not be). */
export function oidcFlagsSet(f: OidcFlags): boolean {
  return Boolean(f.issuerUrl || f.clientId || f.groupsClaim || f.usernamePrefix !== undefined || f.groupsPrefix !== undefined || f.requiredClaims.length || f.caFile || f.usernameClaim !== 'sub' || f.signingAlgs.join(',') !== 'RS256');
}

/** The flags as one JWT authenticator (the same rules upstream derives from them). */
export function jwtFromOidcFlags(f: OidcFlags, caPem: string | undefined): JwtAuthenticatorConfig {
  const problems: string[] = [];
  if (!f.issuerUrl) problems.push('--oidc-issuer-url is required when any --oidc-* flag is set');
  else {
    try {
      const u = new URL(f.issuerUrl);
      if (u.protocol !== 'https:') problems.push(`--oidc-issuer-url ${f.issuerUrl}: must be https`);
    } catch {
      problems.push(`--oidc-issuer-url ${f.issuerUrl}: not a valid URL`);
    }
  }
  if (!f.clientId) problems.push('--oidc-client-id is required with --oidc-issuer-url');
  for (const a of f.signingAlgs) if (!(SUPPORTED_SIGNING_ALGS as readonly string[]).includes(a)) problems.push(`--oidc-signing-algs: unsupported algorithm ${a} (supported: ${SUPPORTED_SIGNING_ALGS.join(', ')})`);
  if (problems.length) throw new AuthenticationConfigError(problems);
  const issuerUrl = f.issuerUrl!;
  // Upstream: "-" disables prefixing; unset means the issuer URL and '#' unless the claim is email.
  const usernamePrefix = f.usernamePrefix === '-' ? '' : (f.usernamePrefix ?? (f.usernameClaim === 'email' ? '' : `${issuerUrl}#`));
  return {
    issuerUrl,
    discoveryUrl: undefined,
    certificateAuthority: caPem,
    audiences: [f.clientId!],
    signingAlgs: f.signingAlgs,
    claimValidationRules: f.requiredClaims.map((r) => ({ kind: 'claim' as const, claim: r.claim, requiredValue: r.value })),
    username: { kind: 'claim', claim: f.usernameClaim, prefix: usernamePrefix },
    groups: f.groupsClaim ? { kind: 'claim', claim: f.groupsClaim, prefix: f.groupsPrefix ?? '' } : undefined,
    uid: undefined,
    extra: [],
    userValidationRules: [],
    checkEmailVerified: f.usernameClaim === 'email',
  };
}
