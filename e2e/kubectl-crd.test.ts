// kubectl with a CustomResourceDefinition: apply the definition, then resources of it, list
// them with their printer columns and short name, patch, explain, delete.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { crdYaml } from './support/crd-yaml.js';
import { kubectl, kubectlAvailable } from './support/kubectl.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

const CRD = crdYaml({
  group: 'example.com',
  plural: 'gadgets',
  kind: 'Gadget',
  shortNames: ['gd'],
  properties: `spec:
  type: object
  properties:
    size: {type: integer, description: How big the gadget is.}
    color: {type: string, default: red}`,
  versionExtra: `additionalPrinterColumns:
- {name: Size, type: integer, jsonPath: .spec.size}
- {name: Color, type: string, jsonPath: .spec.color}`,
});
const GADGET = `apiVersion: example.com/v1
kind: Gadget
metadata:
  name: g1
spec:
  size: 3
`;

describe.skipIf(!kubectlAvailable())('kubectl with custom resources (--naming=kubernetes)', () => {
  let server: ServerProcess;
  const k = (args: string[], input?: string) => kubectl(server.kubeconfig, args, input);
  beforeAll(async () => {
    server = await startServerProcess(['--naming=kubernetes']);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('applies a definition, waits for it, then applies and lists a resource of it', async () => {
    expect((await k(['apply', '-f', '-'], CRD)).stdout).toBe('customresourcedefinition.apiextensions.k8s.io/gadgets.example.com created\n');
    const waited = await k(['wait', '--for=condition=Established', 'crd/gadgets.example.com', '--timeout=20s']);
    expect(waited.stdout).toContain('condition met');
    expect((await k(['apply', '-f', '-'], GADGET)).stdout).toBe('gadget.example.com/g1 created\n');
    const list = await k(['get', 'gd']);
    expect(list.stdout).toMatch(/^NAME\s+SIZE\s+COLOR\ng1\s+3\s+red\n$/);
    expect((await k(['get', 'gadget', 'g1', '-o', 'jsonpath={.spec.color}'])).stdout).toBe('red');
  });

  it('patches with merge and refuses strategic merge', async () => {
    expect((await k(['patch', 'gadget', 'g1', '--type=merge', '-p', '{"spec":{"size":4}}'])).stdout).toBe('gadget.example.com/g1 patched\n');
    const smp = await k(['patch', 'gadget', 'g1', '--type=strategic', '-p', '{"spec":{"size":5}}']);
    expect(smp.code).not.toBe(0);
    expect(smp.stderr).toMatch(/UnsupportedMediaType|unknown format|not supported/i);
  });

  it('explains the resource from its schema', async () => {
    const r = await k(['explain', 'gadget.spec.size']);
    expect(r.stdout).toContain('How big the gadget is.');
  });

  it('refuses a definition that turns pruning off with preserveUnknownFields: true', async () => {
    const r = await k(['apply', '-f', '-'], CRD.replace('gadgets.example.com', 'things.example.com').replace('plural: gadgets, singular: gadget, kind: Gadget, shortNames: [gd]', 'plural: things, kind: Thing').replace('  scope: Namespaced\n', '  scope: Namespaced\n  preserveUnknownFields: true\n'));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead');
  });

  it('deletes the definition and its resources', async () => {
    expect((await k(['delete', 'crd', 'gadgets.example.com'])).stdout).toBe('customresourcedefinition.apiextensions.k8s.io "gadgets.example.com" deleted\n');
    const gone = await k(['get', 'gadgets']);
    expect(gone.code).not.toBe(0);
  });
});
