// internal/aggregator/discovery owns merging the extensions' APIs into discovery: `/apis` and
// `/apis/<group>` list the group/versions of APIServices with a service reference (legacy
// discovery lists them whether or not they are available, as upstream does), and aggregated
// discovery carries each extension's resources as last fetched (`Stale` when the last fetch
// failed). Groups are ordered by their APIServices' groupPriorityMinimum (then name) and an
// extension's versions by versionPriority, as upstream orders them. A subclass of Discovery, so that module stays as it is.
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
  /** Versions, preferred first. */
  versions: Array<{ version: string; priority: number }>;
}

/** Upstream's order: higher versionPriority first, then the Kubernetes version order. */
const byVersionPriority = (a: { version: string; priority: number }, b: { version: string; priority: number }): number =>
  b.priority - a.priority || compareVersionPriority(a.version, b.version);

function groupsOf(entries: ReadonlyArray<{ group: string; version: string; versionPriority: number }>): ExtGroup[] {
  const groups = new Map<string, ExtGroup>();
  for (const e of entries) {
    const g = groups.get(e.group) ?? { name: e.group, versions: [] };
    g.versions.push({ version: e.version, priority: e.versionPriority });
    groups.set(e.group, g);
  }
  for (const g of groups.values()) g.versions.sort(byVersionPriority);
  return [...groups.values()];
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

  /**
   * Each group's priority: the highest groupPriorityMinimum of its APIServices (local ones
   * included, as upstream orders every group by them), else what autoregistration would give.
   */
  private priorities(): (name: string) => number {
    const byGroup = new Map<string, number>();
    for (const a of this.apis.all()) byGroup.set(a.group, Math.max(byGroup.get(a.group) ?? 0, a.groupPriorityMinimum));
    return (name) => {
      const known = byGroup.get(name);
      if (known !== undefined) return known;
      const g = this.cat.group(name);
      const r = g ? this.cat.resources(name, g.preferredVersion)[0] : undefined;
      return !r ? 0 : r.custom ? 1000 : builtinPriority(r.upstreamGroup, r.version).groupPriorityMinimum;
    };
  }

  /** Upstream's group order: priority, highest first, then name. */
  private sorted<T>(items: T[], nameOf: (t: T) => string): T[] {
    const priority = this.priorities();
    return items
      .map((item) => ({ item, name: nameOf(item), p: priority(nameOf(item)) }))
      .sort((x, y) => y.p - x.p || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
      .map((x) => x.item);
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
    const builtin = (base.groups as Json[]).map((g) => {
      const more = ext.find((e) => e.name === g.name);
      return more ? this.extGroupEntry(more, g) : g;
    });
    const fresh = ext.filter((e) => !this.cat.group(e.name)).map((e) => this.extGroupEntry(e));
    return { ...base, groups: this.sorted([...builtin, ...fresh], (g) => g.name as string) };
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
    if (prefix === 'api') return base;
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
    const fresh = ext.filter((e) => !this.cat.group(e.name)).map((e) => ({ metadata: { name: e.name, creationTimestamp: null }, versions: versionItem(e) }) as Json);
    return { ...base, items: this.sorted([...merged, ...fresh], (i) => (i.metadata as Json).name as string) };
  }
}
