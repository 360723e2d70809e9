// internal/testserver/extension-apiserver owns a small extension API server for tests of the
// aggregation layer: HTTPS with its own CA (serving certificate for `<service>.<namespace>.svc`),
// discovery for one group/version with one namespaced resource (`widgets`, kind Widget) that
// can be listed, read and watched, OpenAPI v2 and v3 documents for it, an echo behind any
// connection upgrade, and a record of every request with its X-Remote-* headers and client
// certificate CN. Test-only.
// Imports: testserver/https-webhook-server.

import type { ServerResponse } from 'node:http';
import { startHttpsWebhookServer, type HttpsWebhookServer, type ReceivedRequest } from './https-webhook-server.js';

export interface ExtensionApiServer {
  readonly server: HttpsWebhookServer;
  readonly group: string;
  readonly version: string;
  /** Requests received so far. */
  readonly received: ReceivedRequest[];
  /** Adds (or replaces) a widget in a namespace and tells open watches. */
  put(namespace: string, name: string, spec?: Record<string, unknown>): void;
  /** Open watch responses. */
  watchers(): number;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

export async function startExtensionApiServer(options: { group: string; version: string; dnsNames: string[] }): Promise<ExtensionApiServer> {
  const { group, version } = options;
  const gv = `${group}/${version}`;
  const widgets = new Map<string, Json>();
  const watches = new Set<{ namespace: string; res: ServerResponse }>();
  let rv = 1;
  const status = (res: ServerResponse, code: number, reason: string, message: string): void => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }));
  };
  const resources = [
    { name: 'widgets', singularName: 'widget', namespaced: true, kind: 'Widget', verbs: ['get', 'list', 'watch'], shortNames: ['wd'], categories: ['all'] },
  ];
  const openapiV2 = {
    swagger: '2.0',
    info: { title: 'widgets', version },
    paths: {
      [`/apis/${gv}/namespaces/{namespace}/widgets`]: { get: { operationId: 'listWidgets', responses: { '200': { description: 'OK', schema: { $ref: '#/definitions/com.example.Widget' } } } } },
    },
    definitions: {
      'com.example.Widget': { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } }, 'x-kubernetes-group-version-kind': [{ group, version, kind: 'Widget' }] },
    },
  };
  const openapiV3 = {
    openapi: '3.0.0',
    info: { title: 'widgets', version },
    paths: { [`/apis/${gv}/namespaces/{namespace}/widgets`]: { get: { operationId: 'listWidgets', responses: { '200': { description: 'OK' } } } } },
    components: { schemas: { 'com.example.Widget': openapiV2.definitions['com.example.Widget'] } },
  };
  const server = await startHttpsWebhookServer({
    dnsNames: options.dnsNames,
    requestCert: true,
    // Any upgrade is accepted as an echo: what the client writes comes back, prefixed.
    upgrade: (req, socket, head) => {
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${String(req.headers.upgrade)}\r\n\r\n`);
      if (head.length) socket.write(Buffer.concat([Buffer.from('echo:'), head]));
      socket.on('data', (d: Buffer) => socket.write(Buffer.concat([Buffer.from('echo:'), d])));
      socket.on('error', () => socket.destroy());
    },
    handler: (req, res) => {
      const url = new URL(req.path, 'https://x');
      const p = url.pathname.replace(/\/+$/, '');
      if (p === `/apis/${gv}`) return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv, resources };
      if (p === `/apis/${group}`) return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: [{ groupVersion: gv, version }], preferredVersion: { groupVersion: gv, version } };
      if (p === '/openapi/v2') return openapiV2;
      if (p === `/openapi/v3/apis/${gv}`) return openapiV3;
      const m = new RegExp(`^/apis/${gv.replace(/\./g, '\\.')}/namespaces/([^/]+)/widgets(?:/([^/]+))?$`).exec(p);
      if (!m) return status(res, 404, 'NotFound', 'the server could not find the requested resource');
      const [, ns, name] = m as unknown as [string, string, string | undefined];
      if (name) {
        const w = widgets.get(`${ns}/${name}`);
        return w ?? status(res, 404, 'NotFound', `widgets.${group} "${name}" not found`);
      }
      const items = [...widgets.entries()].filter(([k]) => k.startsWith(`${ns}/`)).map(([, w]) => w);
      if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
        res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
        res.flushHeaders();
        const w = { namespace: ns, res };
        watches.add(w);
        res.on('close', () => watches.delete(w));
        return undefined;
      }
      return { kind: 'WidgetList', apiVersion: gv, metadata: { resourceVersion: String(rv) }, items };
    },
  });
  return {
    server,
    group,
    version,
    received: server.received,
    put(namespace, name, spec = {}) {
      rv++;
      const existed = widgets.has(`${namespace}/${name}`);
      const w = { kind: 'Widget', apiVersion: gv, metadata: { name, namespace, resourceVersion: String(rv), creationTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') }, spec };
      widgets.set(`${namespace}/${name}`, w);
      for (const watch of watches) if (watch.namespace === namespace) watch.res.write(`${JSON.stringify({ type: existed ? 'MODIFIED' : 'ADDED', object: w })}\n`);
    },
    watchers: () => watches.size,
    close: async () => {
      for (const w of watches) w.res.destroy();
      await server.close();
    },
  };
}
