// kubectl with a CustomResourceDefinition converted by a webhook, under both namings: a real
// server process, a real HTTPS conversion webhook reached through a service reference (a
// Service and Endpoints pointing at 127.0.0.1), v1 stored, v2 served with another field shape.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { startHttpsWebhookServer, type HttpsWebhookServer } from '../internal/testserver/https-webhook-server.js';
import { hostPortReply } from '../internal/testserver/host-port-converter.js';
import { webhookServiceYaml } from './support/webhook-service.js';

if (!kubectlAvailable() && process.env.CI === 'true') throw new Error('kubectl is required under CI=true');

const crdYaml = (apiextensions: string, caBundle: string, storage: 'v1' | 'v2') => `apiVersion: ${apiextensions}/v1
kind: CustomResourceDefinition
metadata:
  name: backends.conv.example.com
spec:
  group: conv.example.com
  scope: Namespaced
  names: {plural: backends, singular: backend, kind: Backend}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1, v1beta1]
      clientConfig:
        caBundle: ${caBundle}
        service: {namespace: default, name: conv-webhook, path: /convert, port: 443}
  versions:
  - name: v1
    served: true
    storage: ${storage === 'v1'}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {host: {type: string}, port: {type: integer}}}
  - name: v2
    served: true
    storage: ${storage === 'v2'}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {hostPort: {type: string}}}
`;

const serviceYaml = (port: number) => webhookServiceYaml('conv-webhook', port);

const backendV1 = (name: string, host: string, port: number) => `apiVersion: conv.example.com/v1
kind: Backend
metadata: {name: ${name}, namespace: default}
spec: {host: ${host}, port: ${port}}
`;
const backendV2 = (name: string, hostPort: string) => `apiVersion: conv.example.com/v2
kind: Backend
metadata: {name: ${name}, namespace: default}
spec: {hostPort: "${hostPort}"}
`;

async function waitFor(cond: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

for (const naming of ['kubernetes', 'cluster'] as const) {
  const apiextensions = naming === 'kubernetes' ? 'apiextensions.k8s.io' : 'apiextensions.cluster.io';

  describe.skipIf(!kubectlAvailable())(`kubectl with a conversion webhook (--naming=${naming})`, () => {
    let server: ServerProcess;
    let hook: HttpsWebhookServer;
    const k = (args: string[], input?: string) => kubectl(server.kubeconfig, args, input);
    const ok = async (args: string[], input?: string): Promise<string> => {
      const r = await k(args, input);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
      return r.stdout;
    };
    /** The review versions and desired versions the webhook was asked for, since the last reset. */
    const asked = () => hook.received.map((r) => JSON.parse(r.body) as { apiVersion: string; request: { desiredAPIVersion: string; objects: unknown[] } });

    beforeAll(async () => {
      hook = await startHttpsWebhookServer({ dnsNames: ['conv-webhook.default.svc'], handler: (req) => hostPortReply(req) });
      server = await startServerProcess([`--naming=${naming}`]);
      await ok(['apply', '-f', '-'], serviceYaml(hook.port));
      await ok(['apply', '-f', '-'], crdYaml(apiextensions, hook.caBundle, 'v1'));
      await ok(['wait', '--for=condition=Established', 'crd/backends.conv.example.com', '--timeout=20s']);
    });
    afterAll(async () => {
      await server?.stop();
      await hook?.close();
    });

    it('creates as v1 and shows v2 fields through the webhook, in a v1 ConversionReview of the naming group', async () => {
      expect(await ok(['apply', '-f', '-'], backendV1('b1', 'db', 5432))).toBe('backend.conv.example.com/b1 created\n');
      hook.received.length = 0;
      expect(await ok(['get', 'backends.v2.conv.example.com', 'b1', '-o', 'jsonpath={.apiVersion} {.spec.hostPort}'])).toBe('conv.example.com/v2 db:5432');
      expect(asked().map((r) => [r.apiVersion, r.request.desiredAPIVersion])).toEqual([[`${apiextensions}/v1`, 'conv.example.com/v2']]);
      expect(hook.received[0]!.path).toBe('/convert?timeout=30s');
      expect(await ok(['get', 'backends.v1.conv.example.com', 'b1', '-o', 'jsonpath={.spec.host}:{.spec.port}'])).toBe('db:5432');
    });

    it('lists in v2 with one review for the page', async () => {
      await ok(['apply', '-f', '-'], backendV1('b2', 'cache', 6379));
      hook.received.length = 0;
      expect(await ok(['get', 'backends.v2.conv.example.com', '-o', 'jsonpath={.items[*].spec.hostPort}'])).toBe('db:5432 cache:6379');
      expect(asked().map((r) => r.request.objects.length)).toEqual([2]);
    });

    it('watches in v2 with kubectl get -w', async () => {
      const child = spawn('kubectl', [`--kubeconfig=${server.kubeconfig}`, 'get', 'backends.v2.conv.example.com', '-w', '-o', 'jsonpath={.metadata.name}={.spec.hostPort}{"\\n"}'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, KUBECACHEDIR: `${server.kubeconfig}.cache` },
      });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      try {
        await waitFor(async () => out.includes('b2=cache:6379\n'));
        await ok(['apply', '-f', '-'], backendV1('b3', 'queue', 5672));
        await ok(['patch', 'backends.v1.conv.example.com', 'b1', '--type=merge', '-p', '{"spec":{"port":6543}}']);
        await waitFor(async () => out.includes('b1=db:6543\n'));
        expect(out.trim().split('\n')).toEqual(['b1=db:5432', 'b2=cache:6379', 'b3=queue:5672', 'b1=db:6543']);
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    });

    it('applies as v2 (client-side and server-side): stored in v1', async () => {
      expect(await ok(['apply', '-f', '-'], backendV2('b4', 'web:80'))).toBe('backend.conv.example.com/b4 created\n');
      expect(await ok(['get', 'backends.v1.conv.example.com', 'b4', '-o', 'jsonpath={.spec.host}:{.spec.port}'])).toBe('web:80');
      expect(await ok(['apply', '-f', '-'], backendV2('b4', 'web:8080'))).toBe('backend.conv.example.com/b4 configured\n');
      expect(await ok(['get', 'backends.v1.conv.example.com', 'b4', '-o', 'jsonpath={.spec.host}:{.spec.port}'])).toBe('web:8080');
      // Server-side on an object of its own (taking over b4 from client-side apply would conflict, as upstream).
      expect(await ok(['apply', '--server-side', '-f', '-'], backendV2('b5', 'api:443'))).toBe('backend.conv.example.com/b5 serverside-applied\n');
      expect(await ok(['apply', '--server-side', '-f', '-'], backendV2('b5', 'api:8443'))).toBe('backend.conv.example.com/b5 serverside-applied\n');
      expect(await ok(['get', 'backends.v1.conv.example.com', 'b5', '-o', 'jsonpath={.spec.host}:{.spec.port}'])).toBe('api:8443');
    });

    it("shows upstream's error when the webhook fails", async () => {
      hook.handle((_req, res: ServerResponse) => {
        res.writeHead(500);
        res.end('broken');
      });
      try {
        const r = await k(['get', 'backends.v2.conv.example.com', 'b1']);
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain(
          'Error from server: conversion webhook for conv.example.com/v1, Kind=Backend failed: Post "https://conv-webhook.default.svc:443/convert?timeout=30s" answered HTTP 500',
        );
      } finally {
        hook.handle((req) => hostPortReply(req));
      }
    });

    it('keeps v1 in status.storedVersions when the storage version moves to v2', async () => {
      expect(await ok(['get', 'crd', 'backends.conv.example.com', '-o', 'jsonpath={.status.storedVersions}'])).toBe('["v1"]');
      await ok(['apply', '-f', '-'], crdYaml(apiextensions, hook.caBundle, 'v2'));
      await waitFor(async () => (await ok(['get', 'crd', 'backends.conv.example.com', '-o', 'jsonpath={.status.storedVersions}'])) === '["v1","v2"]');
      // b1 was stored as v1: read in the new storage version, the webhook converts it.
      await waitFor(async () => (await k(['get', 'backends.v2.conv.example.com', 'b1', '-o', 'jsonpath={.spec.hostPort}'])).stdout === 'db:6543');
    });
  });
}
