import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { Attributes, Authorizer, Decision } from '../../authz/authorizer.js';
import { fixedChain } from '../../authz/chain.js';
import type { Env } from '../context.js';
import { withAuthorization } from './with-authorization.js';
import { withRequestInfo } from './with-request-info.js';

/** Records the attributes it is asked about and answers `answer`. */
function recording(answer: Decision): Authorizer & { asked: Attributes[] } {
  const asked: Attributes[] = [];
  return { name: 'recording', asked, authorize: (a) => (asked.push(a), answer) };
}

function appWith(...authorizers: Authorizer[]): Hono<Env> {
  const app = new Hono<Env>();
  app.use('*', withRequestInfo());
  app.use('*', async (c, next) => {
    c.set('user', { name: 'kubelet', groups: ['system:authenticated'] });
    await next();
  });
  app.use('*', withAuthorization(fixedChain(authorizers)));
  app.get('*', (c) => c.text('ok'));
  return app;
}

describe('withAuthorization', () => {
  it.each<[string, string, string]>([
    ['a list by metadata.name', '/api/v1/namespaces/ns/secrets?fieldSelector=metadata.name%3Ds1', 's1'],
    ['a watch by metadata.name (==)', '/api/v1/namespaces/ns/secrets?watch=true&fieldSelector=metadata.name%3D%3Ds1,type%3Dx', 's1'],
    ['a list by another field', '/api/v1/namespaces/ns/secrets?fieldSelector=type%3Dx', ''],
    ['a list excluding a name', '/api/v1/namespaces/ns/secrets?fieldSelector=metadata.name!%3Ds1', ''],
    ['a list by a name that is no path segment', '/api/v1/namespaces/ns/secrets?fieldSelector=metadata.name%3Da%2Fb', ''],
  ])('asks about %s with name %j', async (_what, url, name) => {
    const z = recording({ decision: 'allow', reason: '' });
    expect((await appWith(z).request(url)).status).toBe(200);
    expect(z.asked[0]!.name).toBe(name);
    expect(z.asked[0]!.verb).toMatch(/^(list|watch)$/);
  });

  it('answers 500 when an authorizer failed and nobody allowed, 403 when nobody failed, and an allow after a failure stands', async () => {
    const failed = recording({ decision: 'noOpinion', reason: '', evaluationError: 'webhook: connection refused' });
    const res = await appWith(failed, recording({ decision: 'noOpinion', reason: '' })).request('/api/v1/namespaces/ns/pods');
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ kind: 'Status', code: 500, reason: 'InternalError', message: 'Internal error occurred: webhook: connection refused' });
    expect((await appWith(recording({ decision: 'noOpinion', reason: '' })).request('/api/v1/namespaces/ns/pods')).status).toBe(403);
    expect((await appWith(failed, recording({ decision: 'allow', reason: '' })).request('/api/v1/namespaces/ns/pods')).status).toBe(200);
  });
});
