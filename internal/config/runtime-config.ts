// internal/config/runtime-config owns `--runtime-config`: which API group-versions and
// resources are served. Keys are `api/all`, `api/ga`, `api/beta`, `api/alpha`,
// `<group>/<version>` (`v1` or `api/v1` for the core group) and `<group>/<version>/<resource>`;
// a key without a value means true. Later entries win over earlier ones; specific keys win over
// the `api/*` switches. Imports: nothing from the project (version stability is passed in).

export type Stability = 'ga' | 'beta' | 'alpha';

export interface RuntimeConfigEntry {
  key: string;
  value: boolean;
}

export function parseRuntimeConfig(text: string): RuntimeConfigEntry[] {
  const entries: RuntimeConfigEntry[] = [];
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    const key = (eq < 0 ? part : part.slice(0, eq)).trim();
    const raw = eq < 0 ? 'true' : part.slice(eq + 1).trim().toLowerCase();
    if (!/^[a-z0-9.-]+(\/[a-z0-9.-]+){1,2}$/i.test(key) && key !== 'v1') {
      throw new Error(`invalid runtime-config key "${key}": use api/all, api/ga, api/beta, api/alpha, <group>/<version> or <group>/<version>/<resource>`);
    }
    if (raw !== 'true' && raw !== 'false') throw new Error(`invalid runtime-config value for ${key}: "${raw}" (true or false)`);
    entries.push({ key: key === 'v1' || key === 'api/v1' ? '/v1' : key, value: raw === 'true' });
  }
  return entries;
}

/**
 * Builds the enablement predicate: (group, version, resource?) → served?
 * `defaultFor` gives the default of a version with the given stability.
 */
export function enablementFrom(
  entries: readonly RuntimeConfigEntry[],
  stabilityOf: (version: string) => Stability,
  defaultFor: (stability: Stability) => boolean = (s) => s === 'ga',
): (group: string, version: string, resource?: string) => boolean {
  const switches = new Map<string, boolean>();
  const specific = new Map<string, boolean>();
  for (const { key, value } of entries) {
    if (key === 'api/all' || key === 'api/ga' || key === 'api/beta' || key === 'api/alpha') switches.set(key, value);
    else specific.set(key, value);
  }
  const groupVersionDefault = (group: string, version: string): boolean => {
    const explicit = specific.get(`${group}/${version}`);
    if (explicit !== undefined) return explicit;
    const stability = stabilityOf(version);
    return switches.get(`api/${stability}`) ?? switches.get('api/all') ?? defaultFor(stability);
  };
  return (group, version, resource) => {
    const gv = `${group}/${version}`;
    if (resource !== undefined) return specific.get(`${gv}/${resource}`) ?? groupVersionDefault(group, version);
    // Enabling one resource of an otherwise disabled group-version serves that group-version
    // with just that resource.
    if (groupVersionDefault(group, version)) return true;
    for (const [key, value] of specific) if (value && key.startsWith(`${gv}/`)) return true;
    return false;
  };
}
