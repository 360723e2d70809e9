// internal/admission/admission-config owns `--admission-control-config-file`: upstream's
// AdmissionConfiguration (apiserver.config.<group domain>/v1, kind AdmissionConfiguration; YAML
// or JSON), a list of plugins each with its configuration inline (`configuration`) or in a file
// of its own (`path`, relative to the configuration file). It only finds each plugin's
// configuration document; the plugin that owns it decodes it. Read once at start: an unreadable
// or malformed file stops the server with the reason. Imports: naming.

import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { load } from 'js-yaml';
import type { Naming } from '../naming/naming.js';

/** Plugin name → its configuration document. */
export type AdmissionPluginConfigs = ReadonlyMap<string, unknown>;

export function parseAdmissionConfiguration(text: string, naming: Naming, baseDir: string): AdmissionPluginConfigs {
  const doc = load(text) as unknown;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error('admission configuration must be an object');
  const o = doc as Record<string, unknown>;
  const group = naming.group('apiserver.config.k8s.io');
  const versions = [`${group}/v1`, `${naming.group('apiserver.k8s.io')}/v1alpha1`];
  if (!versions.includes(String(o.apiVersion))) throw new Error(`admission configuration apiVersion must be one of ${versions.join(', ')}, not ${JSON.stringify(o.apiVersion)}`);
  if (o.kind !== 'AdmissionConfiguration') throw new Error(`admission configuration kind must be AdmissionConfiguration, not ${JSON.stringify(o.kind)}`);
  const plugins = o.plugins ?? [];
  if (!Array.isArray(plugins)) throw new Error('admission configuration plugins must be a list');
  const out = new Map<string, unknown>();
  plugins.forEach((p: unknown, i) => {
    const entry = (typeof p === 'object' && p !== null ? p : {}) as Record<string, unknown>;
    if (typeof entry.name !== 'string' || !entry.name) throw new Error(`plugins[${i}].name is required`);
    if (out.has(entry.name)) throw new Error(`plugins[${i}].name: duplicate plugin ${JSON.stringify(entry.name)}`);
    if (entry.configuration !== undefined) out.set(entry.name, entry.configuration);
    else if (typeof entry.path === 'string' && entry.path) {
      const path = isAbsolute(entry.path) ? entry.path : join(baseDir, entry.path);
      out.set(entry.name, load(readFileSync(path, 'utf8')));
    } else throw new Error(`plugins[${i}]: one of configuration or path is required`);
  });
  return out;
}

export function loadAdmissionConfiguration(file: string | undefined, naming: Naming): AdmissionPluginConfigs {
  if (!file) return new Map();
  return parseAdmissionConfiguration(readFileSync(file, 'utf8'), naming, dirname(file));
}
