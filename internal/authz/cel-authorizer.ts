// internal/authz/cel-authorizer owns the CEL `authorizer` library (upstream's
// k8s.io/apiserver/pkg/cel/library Authz and AuthzSelectors, 1.32) for expressions that ask
// the authorizer chain a question on behalf of a request's user, as admission policies do:
//
//   authorizer.group('apps').resource('deployments').subresource('scale').namespace('ns')
//     .name('x').check('update').allowed()           // also .reason(), .errored(), .error()
//   authorizer.path('/healthz').check('get').allowed()
//   authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('list').allowed()
//   authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1').labelSelector('a=b')
//   authorizer.requestResource.check('delete').allowed()   // when a request resource is given
//
// The types and receiver functions are registered in a CEL environment (internal/cel, on
// @marcbachmann/cel-js) under upstream's type names (kubernetes.authorization.Authorizer,
// GroupCheck, ResourceCheck, PathCheck, Decision), so a wrong chain such as
// `authorizer.check('get')` is a type error at load, as upstream's. check() asks the chain,
// which is asynchronous: it is an async CEL function, so an expression using it is evaluated
// with runAsync. A branch not taken asks nothing; each distinct question is asked once per
// `authorizer` value (one per evaluation, as upstream caches them per request), and the
// distinct questions of one value are capped (MAX_CHECKS) so a macro over a long list cannot
// fan out without bound.
//
// Resource checks ask with apiVersion `*`, as upstream's do; a service account's checks run
// as `system:serviceaccount:<ns>:<name>` in `system:serviceaccounts` and
// `system:serviceaccounts:<ns>` (upstream's ServiceAccountInfo, without system:authenticated).
// A chain that throws makes errored() true (error() its message) and allowed() false; a
// decision carrying an evaluationError (a failed webhook) is errored too. A selector that
// does not parse is left out of the question, as upstream's (selectors only narrow).
// Imports: authz/authorizer, auth/user, cel, selectors.

import { CelRuntimeError, type Environment } from '../cel/cel.js';
import type { UserInfo } from '../auth/user.js';
import { tryParseFieldSelector, tryParseLabelSelector } from '../selectors/index.js';
import type { Attributes, Decision } from './authorizer.js';

/** Distinct authorization checks one `authorizer` value (one evaluation) may make. */
export const MAX_CHECKS = 32;

/** The CEL type names, as upstream declares them. */
export const AUTHORIZER_TYPE = 'kubernetes.authorization.Authorizer';
const GROUP_CHECK = 'kubernetes.authorization.GroupCheck';
const RESOURCE_CHECK = 'kubernetes.authorization.ResourceCheck';
const PATH_CHECK = 'kubernetes.authorization.PathCheck';
const DECISION = 'kubernetes.authorization.Decision';

/** The resource a request is about, for `authorizer.requestResource`. */
export interface RequestResource {
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface CelAuthorizerContext {
  /** The chain's answer for one question (e.g. `(a) => authorize(authorizers, a)`). */
  authorize(attrs: Attributes): Promise<Decision> | Decision;
  /** Whose questions `authorizer` asks. */
  user: UserInfo;
  /** Makes `authorizer.requestResource` available. */
  requestResource?: RequestResource;
}

/** One evaluation's questions and answers, shared by the values derived from one `authorizer`. */
class Session {
  readonly #answers = new Map<string, Promise<DecisionVal>>();
  constructor(readonly context: CelAuthorizerContext) {}

  ask(attrs: Attributes): Promise<DecisionVal> {
    const key = JSON.stringify([attrs.user.name, attrs.user.groups, attrs.verb, attrs.isResourceRequest, attrs.path, attrs.apiGroup, attrs.resource, attrs.subresource, attrs.namespace, attrs.name, attrs.fieldSelector, attrs.labelSelector]);
    const known = this.#answers.get(key);
    if (known) return known;
    if (this.#answers.size >= MAX_CHECKS) throw new CelRuntimeError(`more than ${MAX_CHECKS} authorization checks in one evaluation`);
    const asked = (async (): Promise<DecisionVal> => {
      try {
        const d = await this.context.authorize(attrs);
        return new DecisionVal(d.decision, d.reason, d.evaluationError);
      } catch (e) {
        return new DecisionVal('noOpinion', '', e instanceof Error ? e.message : String(e));
      }
    })();
    this.#answers.set(key, asked);
    return asked;
  }
}

// The values are opaque to CEL: no own properties but `requestResource` (private fields).

class AuthorizerVal {
  readonly #user: UserInfo;
  readonly #session: Session;
  /** Present when the evaluation is about a request (admission), as upstream declares it then. */
  readonly requestResource?: ResourceCheckVal;
  constructor(user: UserInfo, session: Session, requestResource?: RequestResource) {
    this.#user = user;
    this.#session = session;
    if (requestResource) {
      const { group, resource, subresource = '', namespace = '', name = '' } = requestResource;
      this.requestResource = new ResourceCheckVal(this, group, resource, { subresource, namespace, name, fieldSelector: '', labelSelector: '' });
    }
  }
  ask(attrs: Omit<Attributes, 'user'>): Promise<DecisionVal> {
    return this.#session.ask({ ...attrs, user: this.#user });
  }
  group(group: string): GroupCheckVal {
    return new GroupCheckVal(this, group);
  }
  path(path: string): PathCheckVal {
    return new PathCheckVal(this, path);
  }
  serviceAccount(namespace: string, name: string): AuthorizerVal {
    return new AuthorizerVal({ name: `system:serviceaccount:${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] }, this.#session);
  }
}

class GroupCheckVal {
  readonly #authz: AuthorizerVal;
  readonly #group: string;
  constructor(authz: AuthorizerVal, group: string) {
    this.#authz = authz;
    this.#group = group;
  }
  resource(resource: string): ResourceCheckVal {
    return new ResourceCheckVal(this.#authz, this.#group, resource, { subresource: '', namespace: '', name: '', fieldSelector: '', labelSelector: '' });
  }
}

interface ResourceFields {
  subresource: string;
  namespace: string;
  name: string;
  fieldSelector: string;
  labelSelector: string;
}

class ResourceCheckVal {
  readonly #authz: AuthorizerVal;
  readonly #group: string;
  readonly #resource: string;
  readonly #fields: ResourceFields;
  constructor(authz: AuthorizerVal, group: string, resource: string, fields: ResourceFields) {
    this.#authz = authz;
    this.#group = group;
    this.#resource = resource;
    this.#fields = fields;
  }
  with(change: Partial<ResourceFields>): ResourceCheckVal {
    return new ResourceCheckVal(this.#authz, this.#group, this.#resource, { ...this.#fields, ...change });
  }
  check(verb: string): Promise<DecisionVal> {
    const f = this.#fields;
    const attrs: Omit<Attributes, 'user'> = {
      verb,
      isResourceRequest: true,
      path: '',
      namespace: f.namespace,
      apiGroup: this.#group,
      apiVersion: '*',
      resource: this.#resource,
      subresource: f.subresource,
      name: f.name,
    };
    if (f.fieldSelector) {
      const p = tryParseFieldSelector(f.fieldSelector);
      if ('selector' in p && p.selector.requirements.length) attrs.fieldSelector = p.selector.requirements;
    }
    if (f.labelSelector) {
      const p = tryParseLabelSelector(f.labelSelector);
      if ('selector' in p && p.selector.requirements.length) attrs.labelSelector = p.selector.requirements;
    }
    return this.#authz.ask(attrs);
  }
}

class PathCheckVal {
  readonly #authz: AuthorizerVal;
  readonly #path: string;
  constructor(authz: AuthorizerVal, path: string) {
    this.#authz = authz;
    this.#path = path;
  }
  check(verb: string): Promise<DecisionVal> {
    return this.#authz.ask({ verb, isResourceRequest: false, path: this.#path, namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '' });
  }
}

class DecisionVal {
  readonly #decision: Decision['decision'];
  readonly #reason: string;
  readonly #error: string | undefined;
  constructor(decision: Decision['decision'], reason: string, error?: string) {
    this.#decision = decision;
    this.#reason = reason;
    this.#error = error;
  }
  allowed(): boolean {
    return this.#decision === 'allow';
  }
  reason(): string {
    return this.#reason;
  }
  errored(): boolean {
    return this.#error !== undefined;
  }
  error(): string {
    return this.#error ?? '';
  }
}

/**
 * Adds the library to `env`: the types, their receiver functions, and the `authorizer`
 * variable. Returns the same (mutable) environment, as the library's register* calls do.
 */
export function registerAuthorizerLibrary(env: Environment): Environment {
  return env
    .registerType(DECISION, DecisionVal)
    .registerType(PATH_CHECK, PathCheckVal)
    .registerType(RESOURCE_CHECK, ResourceCheckVal)
    .registerType(GROUP_CHECK, GroupCheckVal)
    .registerType(AUTHORIZER_TYPE, { ctor: AuthorizerVal, fields: { requestResource: RESOURCE_CHECK } })
    .registerVariable('authorizer', AUTHORIZER_TYPE)
    .registerFunction(`${AUTHORIZER_TYPE}.group(string): ${GROUP_CHECK}`, (a: AuthorizerVal, g: string) => a.group(g))
    .registerFunction(`${AUTHORIZER_TYPE}.path(string): ${PATH_CHECK}`, (a: AuthorizerVal, p: string) => a.path(p))
    .registerFunction(`${AUTHORIZER_TYPE}.serviceAccount(string, string): ${AUTHORIZER_TYPE}`, (a: AuthorizerVal, ns: string, n: string) => a.serviceAccount(ns, n))
    .registerFunction(`${GROUP_CHECK}.resource(string): ${RESOURCE_CHECK}`, (g: GroupCheckVal, r: string) => g.resource(r))
    .registerFunction(`${RESOURCE_CHECK}.subresource(string): ${RESOURCE_CHECK}`, (r: ResourceCheckVal, v: string) => r.with({ subresource: v }))
    .registerFunction(`${RESOURCE_CHECK}.namespace(string): ${RESOURCE_CHECK}`, (r: ResourceCheckVal, v: string) => r.with({ namespace: v }))
    .registerFunction(`${RESOURCE_CHECK}.name(string): ${RESOURCE_CHECK}`, (r: ResourceCheckVal, v: string) => r.with({ name: v }))
    .registerFunction(`${RESOURCE_CHECK}.fieldSelector(string): ${RESOURCE_CHECK}`, (r: ResourceCheckVal, v: string) => r.with({ fieldSelector: v }))
    .registerFunction(`${RESOURCE_CHECK}.labelSelector(string): ${RESOURCE_CHECK}`, (r: ResourceCheckVal, v: string) => r.with({ labelSelector: v }))
    .registerFunction(`${RESOURCE_CHECK}.check(string): ${DECISION}`, (r: ResourceCheckVal, verb: string) => r.check(verb))
    .registerFunction(`${PATH_CHECK}.check(string): ${DECISION}`, (p: PathCheckVal, verb: string) => p.check(verb))
    .registerFunction(`${DECISION}.allowed(): bool`, (d: DecisionVal) => d.allowed())
    .registerFunction(`${DECISION}.reason(): string`, (d: DecisionVal) => d.reason())
    .registerFunction(`${DECISION}.errored(): bool`, (d: DecisionVal) => d.errored())
    .registerFunction(`${DECISION}.error(): string`, (d: DecisionVal) => d.error());
}

/** The value of `authorizer` for one evaluation: questions asked as `context.user`. */
export function authorizerFor(context: CelAuthorizerContext): unknown {
  return new AuthorizerVal(context.user, new Session(context), context.requestResource);
}
