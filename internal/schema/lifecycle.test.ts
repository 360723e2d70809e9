import { describe, expect, it } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { ApiCatalog } from './catalog.js';
import { builtinDeprecation, deprecationWarning, LIFECYCLE_MARKERS, resolveLifecycle, SCHEMA_RELEASE, type LifecycleMarkers } from './lifecycle.js';
import { readDataFile } from './data-files.js';
import type { GeneratedCatalog } from './generated-catalog.js';
import { SERVER_VERSION } from '../server/server.js';

const cluster = createNaming('cluster');
const kube = createNaming('kubernetes');
const rel = (minor: number) => ({ major: 1, minor });

describe('deprecation warning text (upstream wording, every variant)', () => {
  const cases: Array<[string, string, string, string, LifecycleMarkers, string, string]> = [
    // [naming, group, version, kind, markers, expected (kubernetes), expected (cluster)]
    ['deprecated only', '', 'v1', 'ComponentStatus', { deprecated: rel(19) }, 'v1 ComponentStatus is deprecated in v1.19+', 'v1 ComponentStatus is deprecated in v1.19+'],
    [
      'with replacement, no removal',
      '',
      'v1',
      'Endpoints',
      { deprecated: rel(33), replacement: { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice' } },
      'v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice',
      'v1 Endpoints is deprecated in v1.33+; use discovery.cluster.io/v1 EndpointSlice',
    ],
    [
      'with removal and replacement',
      'flowcontrol.apiserver.k8s.io',
      'v1beta3',
      'FlowSchema',
      { deprecated: rel(29), removed: rel(32), replacement: { group: 'flowcontrol.apiserver.k8s.io', version: 'v1', kind: 'FlowSchema' } },
      'flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema is deprecated in v1.29+, unavailable in v1.32+; use flowcontrol.apiserver.k8s.io/v1 FlowSchema',
      'flowcontrol.apiserver.cluster.io/v1beta3 FlowSchema is deprecated in v1.29+, unavailable in v1.32+; use flowcontrol.apiserver.cluster.io/v1 FlowSchema',
    ],
    ['with removal, no replacement', 'policy', 'v1beta1', 'PodSecurityPolicy', { deprecated: rel(21), removed: rel(25) }, 'policy/v1beta1 PodSecurityPolicy is deprecated in v1.21+, unavailable in v1.25+', 'policy/v1beta1 PodSecurityPolicy is deprecated in v1.21+, unavailable in v1.25+'],
  ];
  it.each(cases)('%s', (_name, group, version, kind, markers, kubeText, clusterText) => {
    expect(deprecationWarning(kube, group, version, kind, markers)).toBe(kubeText);
    expect(deprecationWarning(cluster, group, version, kind, markers)).toBe(clusterText);
  });
});

describe('lifecycle defaults and the running release', () => {
  it.each([
    // beta: deprecated three minors after introduction, removed three after that
    ['v1beta1', { introduced: rel(31) }, { deprecated: rel(34), removed: rel(37) }],
    ['v1beta2', { introduced: rel(30), deprecated: rel(31) }, { deprecated: rel(31), removed: rel(34) }],
    ['v1beta1', { introduced: rel(30), removed: rel(40) }, { deprecated: rel(33), removed: rel(40) }],
    // alpha and GA: nothing by default
    ['v1alpha1', { introduced: rel(20) }, {}],
    ['v1', { introduced: rel(0) }, {}],
  ] as const)('%s %j', (version, markers, expected) => {
    const m = resolveLifecycle(version, markers);
    expect({ deprecated: m.deprecated, removed: m.removed }).toEqual({ deprecated: undefined, removed: undefined, ...expected });
  });

  it.each([
    [rel(33), undefined],
    [rel(34), { warning: 'storage.k8s.io/v1beta1 VolumeAttributesClass is deprecated in v1.34+, unavailable in v1.37+; use storage.k8s.io/v1 VolumeAttributesClass', removedRelease: '1.37' }],
    [{ major: 2, minor: 0 }, { warning: 'storage.k8s.io/v1beta1 VolumeAttributesClass is deprecated in v1.34+, unavailable in v1.37+; use storage.k8s.io/v1 VolumeAttributesClass', removedRelease: '1.37' }],
  ])('a kind is deprecated from its deprecated release on (%j)', (current, expected) => {
    expect(builtinDeprecation(kube, 'storage.k8s.io', 'v1beta1', 'VolumeAttributesClass', current)).toEqual(expected);
  });

  it('judges deprecation at the release the server reports', () => {
    expect(`${SCHEMA_RELEASE.major}.${SCHEMA_RELEASE.minor}`).toBe(`${SERVER_VERSION.major}.${SERVER_VERSION.minor}`);
  });

  it('every marker names a kind the schema data serves, and every non-GA kind has markers', () => {
    const data = JSON.parse(readDataFile('api-resources.json')) as GeneratedCatalog;
    const served = new Set(data.groupVersions.flatMap((gv) => gv.resources.map((r) => `${gv.group}/${gv.version}/${r.kind}`)));
    for (const key of Object.keys(LIFECYCLE_MARKERS)) expect(served, key).toContain(key);
    const nonGa = [...served].filter((k) => /\/v\d+(alpha|beta)\d+\//.test(k));
    for (const key of nonGa) expect(Object.keys(LIFECYCLE_MARKERS), key).toContain(key);
  });
});

describe('catalog deprecation of built-in kinds', () => {
  it.each([
    ['kubernetes', kube, 'discovery.k8s.io'],
    ['cluster', cluster, 'discovery.cluster.io'],
  ] as const)('under --naming=%s', (_mode, naming, discovery) => {
    const all = new ApiCatalog(naming, () => true);
    expect(all.resource('', 'v1', 'endpoints')!.deprecation).toEqual({ warning: `v1 Endpoints is deprecated in v1.33+; use ${discovery}/v1 EndpointSlice`, removedRelease: '' });
    expect(all.resource('', 'v1', 'componentstatuses')!.deprecation).toEqual({ warning: 'v1 ComponentStatus is deprecated in v1.19+', removedRelease: '' });
    expect(all.resource(naming.group('networking.k8s.io'), 'v1beta1', 'ipaddresses')!.deprecation?.removedRelease).toBe('1.37');
    expect(all.resource('', 'v1', 'pods')!.deprecation).toBeUndefined();
    expect(all.resource(naming.group('networking.k8s.io'), 'v1', 'ipaddresses')!.deprecation).toBeUndefined();
    expect(all.resource(naming.group('storagemigration.k8s.io'), 'v1beta1', 'storageversionmigrations')!.deprecation).toBeUndefined();
  });
});
