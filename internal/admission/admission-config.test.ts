import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseFlags, type ServerConfig } from '../config/flags.js';
import { createNaming } from '../naming/naming.js';
import { loadAdmissionConfiguration, parseAdmissionConfiguration } from './admission-config.js';

const dir = mkdtempSync(join(tmpdir(), 'admission-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('--admission-control-config-file', () => {
  const naming = createNaming('cluster');

  it('is a flag, unset by default', () => {
    expect((parseFlags([]) as ServerConfig).admissionControlConfigFile).toBeUndefined();
    expect((parseFlags(['--admission-control-config-file=/etc/a.yaml']) as ServerConfig).admissionControlConfigFile).toBe('/etc/a.yaml');
  });

  it('gives each plugin its configuration, inline or from a path relative to the file', () => {
    writeFileSync(join(dir, 'psa.yaml'), 'kind: PodSecurityConfiguration\ndefaults: {enforce: baseline}\n');
    const file = join(dir, 'admission.yaml');
    writeFileSync(file, 'apiVersion: apiserver.config.cluster.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: psa.yaml\n- name: Other\n  configuration: {a: 1}\n');
    const configs = loadAdmissionConfiguration(file, naming);
    expect(configs.get('PodSecurity')).toEqual({ kind: 'PodSecurityConfiguration', defaults: { enforce: 'baseline' } });
    expect(configs.get('Other')).toEqual({ a: 1 });
    expect(loadAdmissionConfiguration(undefined, naming).size).toBe(0);
  });

  it.each([
    ['apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n', 'admission configuration apiVersion must be one of apiserver.config.cluster.io/v1'],
    ['apiVersion: apiserver.config.cluster.io/v1\nkind: Other\n', 'admission configuration kind must be AdmissionConfiguration, not "Other"'],
    ['apiVersion: apiserver.config.cluster.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: A\n', 'plugins[0]: one of configuration or path is required'],
    ['apiVersion: apiserver.config.cluster.io/v1\nkind: AdmissionConfiguration\nplugins:\n- {name: A, configuration: {}}\n- {name: A, configuration: {}}\n', 'plugins[1].name: duplicate plugin "A"'],
  ])('refuses %j', (text, message) => {
    expect(() => parseAdmissionConfiguration(text, naming, dir)).toThrow(message);
  });
});
