// internal/aggregator/discovery owns merging the extensions' APIs into discovery: `/apis` and
// `/apis/<group>` list the group/versions of APIServices with a service reference (legacy
// discovery lists them whether or not they are available, as upstream does), and aggregated
// discovery carries each extension's resources as last fetched (`Stale` when the last fetch
// failed). Groups are placed by groupPriorityMinimum and versions ordered by versionPriority,
// as upstream orders them. A subclass of Discovery, so that module stays as it is.
// Imports: discovery, schema (catalog, versions), aggregator (apiservices, docs, autoregister).

import { Discovery } from '../discovery/discovery.js';
import type { Naming } from '../naming/naming.js';
import type { ApiCatalog } from '../schema/catalog.js';
import { compareVersionPriority } from '../schema/versions.js';
import type { ApiServices } from './apiservices.js';
import { builtinPriority } from './autoregister.js';
import type { ExtensionDocs } from './extension-docs.js';

type Json = Record<string, unknown>;

interface ExtGroup {
  name: string;
  priority: number;
  /** Versions, preferred first. */
  versions: Array<{ version: string; priority: number }>;
}

/** Upstream's order: higher versionPriority first, then the Kubernetes version order. */
const byVersionPriority = (a: { version: string; priority: number }, b: { version: string; priority: number }): number =>
  b.priority - a.priority || compareVersionPriority(a.version, b.version);

function groupsOf(entries: ReadonlyArray<{ group: string; version: string; groupPriorityMinimum: number; versionPriority: number }>): ExtGroup[] {
  const groups = new Map<string, ExtGroup>();
  for (const e of entries) {
    const g = groups.get(e.group) ?? { name: e.group, priority: 0, versions: [] };
    g.priority = Math.max(g.priority, e.groupPriorityMinimum);
    g.versions.push({ version: e.version, priority: e.versionPriority });
    groups.set(e.group, g);
  }
  for (const g of groups.values()) g.versions.sort(byVersionPriority);
  return [...groups.values()];
}

/** Merges extension groups into a built-in list: each goes before the first built-in group of lower priority. */
function placeByPriority<T>(builtin: T[], priorityOf: (t: T) => number, ext: Array<{ item: T; priority: number; name: string }>): T[] {
  const out = [...builtin];
  for (const e of [...ext].sort((a, b) => b.priority - a.priority || a.name.localeCompare(b.name))) {
    const at = out.findIndex((t) => priorityOf(t) < e.priority);
    if (at < 0) out.push(e.item);
    else out.splice(at, 0, e.item);
  }
  return out;
}

/** An aggregated-discovery resource from a legacy APIResourceList entry (and its subresources). */
function discoveryResources(resources: readonly Json[], group: string, version: string): Json[] {
  const main = resources.filter((r) => typeof r.name === 'string' && !(r.name as string).includes('/'));
  return main.map((r) => {
    const d: Json = {
      resource: r.name,
      responseKind: { group: typeof r.group === 'string' ? r.group : group, version: typeof r.version === 'string' ? r.version : version, kind: r.kind },
      scope: r.namespaced === true ? 'Namespaced' : 'Cluster',
      singularResource: typeof r.singularName === 'string' ? r.singularName : '',
      verbs: Array.isArray(r.verbs) ? r.verbs : [],
    };
    if (Array.isArray(r.shortNames) && r.shortNames.length) d.shortNames = r.shortNames;
    if (Array.isArray(r.categories) && r.categories.length) d.categories = r.categories;
    const subs = resources.filter((s) => typeof s.name === 'string' && (s.name as string).startsWith(`${r.name as string}/`));
    if (subs.length) {
      d.subresources = subs.map((s) => ({
        subresource: (s.name as string).slice((r.name as string).length + 1),
        responseKind: { group: typeof s.group === 'string' ? s.group : group, version: typeof s.version === 'string' ? s.version : version, kind: s.kind },
        verbs: Array.isArray(s.verbs) ? s.verbs : [],
      }));
    }
    return d;
  });
}

export class AggregatedDiscovery extends Discovery {
  constructor(
    private readonly cat: ApiCatalog,
    naming: Naming,
    private readonly apis: ApiServices,
    private readonly docs: ExtensionDocs,
  ) {
    super(cat, naming);
  }

  private builtinPriorityOf(name: string): number {
    const r = this.cat.group(name) && this.cat.resources(name, this.cat.group(name)!.preferredVersion)[0];
    return r ? builtinPriority(r.upstreamGroup, r.version).groupPriorityMinimum : 0;
  }

  /** Group/versions of APIServices with a service reference that the catalog does not serve. */
  private extensionGroups(): ExtGroup[] {
    const remote = this.apis.all().filter((a) => a.service && a.group !== '' && this.cat.resources(a.group, a.version).length === 0);
    return groupsOf(remote);
  }

  private extGroupEntry(g: ExtGroup, builtin?: Json): Json {
    const versions = g.versions.map((v) => ({ groupVersion: `${g.name}/${v.version}`, version: v.version }));
    if (!builtin) return { name: g.name, versions, preferredVersion: versions[0] };
    return { ...builtin, versions: [...(builtin.versions as Json[]), ...versions] };
  }

  override apiGroupList(): Json {
    const base = super.apiGroupList();
    const ext = this.extensionGroups();
    if (ext.length === 0) return base;
    const builtin = (base.groups as Json[]).map((g) => {
      const more = ext.find((e) => e.name === g.name);
      return more ? this.extGroupEntry(more, g) : g;
    });
    const fresh = ext.filter((e) => !this.cat.group(e.name)).map((e) => ({ item: this.extGroupEntry(e), priority: e.priority, name: e.name }));
    return { ...base, groups: placeByPriority(builtin, (g) => this.builtinPriorityOf(g.name as string), fresh) };
  }

  override apiGroup(name: string): Json | undefined {
    const base = super.apiGroup(name);
    const ext = this.extensionGroups().find((e) => e.name === name);
    if (!ext) return base;
    return { kind: 'APIGroup', apiVersion: 'v1', ...this.extGroupEntry(ext, base) };
  }

  override aggregated(prefix: 'api' | 'apis', version: 'v2' | 'v2beta1'): Json {
    const base = super.aggregated(prefix, version);
    const docs = this.docs.all().filter((d) => d.group !== '' && this.cat.resources(d.group, d.version).length === 0);
    if (prefix === 'api' || docs.length === 0) return base;
    const items = base.items as Json[];
    const versionItem = (g: ExtGroup) =>
      g.versions.map((v) => {
        const doc = docs.find((d) => d.group === g.name && d.version === v.version)!;
        return { version: v.version, resources: discoveryResources(doc.resources, g.name, v.version), freshness: doc.stale ? 'Stale' : 'Current' };
      });
    const ext = groupsOf(docs);
    const merged = items.map((item) => {
      const name = (item.metadata as Json).name as string;
      const more = ext.find((e) => e.name === name);
      return more ? { ...item, versions: [...(item.versions as Json[]), ...versionItem(more)] } : item;
    });
    const fresh = ext
      .filter((e) => !this.cat.group(e.name))
      .map((e) => ({ item: { metadata: { name: e.name, creationTimestamp: null }, versions: versionItem(e) } as Json, priority: e.priority, name: e.name }));
    return { ...base, items: placeByPriority(merged, (i) => this.builtinPriorityOf((i.metadata as Json).name as string), fresh) };
  }
}
