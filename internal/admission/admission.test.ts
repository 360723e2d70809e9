import { describe, expect, it } from 'vitest';
import { AdmissionChain, type AdmissionPlugin, type AdmissionRequest } from './admission.js';
import type { ResourceInfo } from '../schema/catalog.js';

const req = (): AdmissionRequest => ({
  operation: 'CREATE',
  resource: { group: '', version: 'v1', resource: 'configmaps' } as ResourceInfo,
  subresource: '',
  namespace: 'ns',
  name: 'x',
  object: { metadata: { name: 'x' } },
  oldObject: undefined,
  user: { name: 'u', groups: [] },
  dryRun: false,
});

/** A mutating plugin that sets `data[key]` and records its calls. */
function setter(name: string, key: string | undefined, calls: string[], reinvocable: boolean | 'says-no' | 'says-yes'): AdmissionPlugin {
  const set = (r: AdmissionRequest, phase: string) => {
    calls.push(`${name}:${phase}`);
    if (key) (r.object!.data as Record<string, string> | undefined) ? ((r.object!.data as Record<string, string>)[key] = name) : (r.object!.data = { [key]: name });
  };
  const says = reinvocable === 'says-no' ? { reinvocable: () => false } : reinvocable === 'says-yes' ? { reinvocable: () => true } : {};
  return { name, handles: () => true, admit: (r) => set(r, 'admit'), ...(reinvocable ? { reinvoke: (r: AdmissionRequest) => set(r, 'reinvoke'), ...says } : {}) };
}

describe('AdmissionChain reinvocation', () => {
  it.each([
    ['a later plugin changed the object: the reinvocable one runs again', [['a', undefined, true], ['b', 'k', false]], ['a:admit', 'b:admit', 'a:reinvoke']],
    ['nothing changed after it: no reinvocation', [['a', 'k', true], ['b', undefined, false]], ['a:admit', 'b:admit']],
    ['a plugin without reinvoke is never reinvoked', [['a', undefined, false], ['b', 'k', false]], ['a:admit', 'b:admit']],
    ['the last plugin is never reinvoked by its own change', [['a', undefined, false], ['b', 'k', true]], ['a:admit', 'b:admit']],
    ['a plugin with nothing to reinvoke for the request is not reinvoked', [['a', undefined, 'says-no'], ['b', 'k', false]], ['a:admit', 'b:admit']],
    ['a plugin that has something to reinvoke is', [['a', undefined, 'says-yes'], ['b', 'k', false]], ['a:admit', 'b:admit', 'a:reinvoke']],
  ] as const)('%s', async (_name, plugins, want) => {
    const calls: string[] = [];
    await new AdmissionChain(plugins.map(([n, k, r]) => setter(n, k, calls, r))).mutate(req());
    expect(calls).toEqual(want);
  });
});
