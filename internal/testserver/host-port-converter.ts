// internal/testserver/host-port-converter owns the conversion webhook logic the tests serve from
// their HTTPS webhook server: version v1 of a resource has `spec.host` and `spec.port`, v2 has
// `spec.hostPort` ("host:port"); a ConversionReview (any review version) is answered in its own
// apiVersion with the request's uid, and a tweak lets a test break the reply; and the
// definition of that resource (backends.conv.example.com). Test-only.
// Imports: testserver/https-webhook-server (types).

import type { ReceivedRequest } from './https-webhook-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form JSON bodies

/** Converts one object to `desired` (`<group>/v1` or `<group>/v2`). */
export function convertHostPort(o: Obj, desired: string): Obj {
  const out: Obj = structuredClone(o);
  out.apiVersion = desired;
  const spec: Obj = out.spec ?? {};
  if (desired.endsWith('/v2') && 'host' in spec) {
    const { host, port, ...rest } = spec;
    out.spec = { ...rest, hostPort: `${host}:${port}` };
  } else if (desired.endsWith('/v1') && 'hostPort' in spec) {
    const { hostPort, ...rest } = spec;
    const [host, port] = String(hostPort).split(':');
    out.spec = { ...rest, host, port: Number(port) };
  }
  return out;
}

/** A correct reply to a ConversionReview request; `tweak` may change the converted objects. */
export function hostPortReply(req: ReceivedRequest, tweak: (converted: Obj[]) => Obj[] = (c) => c): Obj {
  const review = JSON.parse(req.body) as Obj;
  const objects = (review.request.objects as Obj[]).map((o) => convertHostPort(o, review.request.desiredAPIVersion));
  return { apiVersion: review.apiVersion, kind: 'ConversionReview', response: { uid: review.request.uid, result: { status: 'Success' }, convertedObjects: tweak(objects) } };
}

const schema = (spec: Obj) => ({ openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: spec } } } });

/** backends.conv.example.com: v1 (host, port) and v2 (hostPort), `storage` the storage version, with the given `spec.conversion`. */
export function hostPortCrd(apiextensions: string, conversion: Obj, storage: 'v1' | 'v2' = 'v1'): Obj {
  return {
    apiVersion: `${apiextensions}/v1`,
    kind: 'CustomResourceDefinition',
    metadata: { name: 'backends.conv.example.com' },
    spec: {
      group: 'conv.example.com',
      scope: 'Namespaced',
      names: { plural: 'backends', singular: 'backend', kind: 'Backend' },
      versions: [
        { name: 'v1', served: true, storage: storage === 'v1', schema: schema({ host: { type: 'string' }, port: { type: 'integer' } }) },
        { name: 'v2', served: true, storage: storage === 'v2', schema: schema({ hostPort: { type: 'string' } }) },
      ],
      conversion,
    },
  };
}
