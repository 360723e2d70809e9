// internal/http/handlers/selection owns turning a request's selectors (labelSelector,
// fieldSelector, and the item name of a single-object watch) into the entry filter the
// registry and watch cache apply to cached entries. Imports: apierrors, selectors, watchcache (types).

import { errors } from '../../apierrors/status.js';
import { fieldsetFor, parseSelectionPredicate, selectsEverything, type FieldSelector, type LabelSelector } from '../../selectors/index.js';
import type { ResourceInfo } from '../../schema/catalog.js';
import { indexedFilter, type CacheEntry, type EntryFilter, type FilterIndex } from '../../watchcache/types.js';

export interface Selection {
  filter: EntryFilter | undefined;
  /** A label or field selector was given (remainingItemCount is then omitted). */
  hasSelector: boolean;
}

export function selectionFor(resource: ResourceInfo, query: URLSearchParams, itemName?: string): Selection {
  const predicate = parseSelectionPredicate(resource, { labelSelector: query.get('labelSelector'), fieldSelector: query.get('fieldSelector') });
  // Upstream's ListResource: a single-object watch may carry a field selector only when it pins
  // metadata.name to the requested name.
  if (itemName !== undefined && !predicate.field.isEmpty() && predicate.field.requiresExactMatch('metadata.name') !== itemName) {
    throw errors.badRequest("fieldSelector metadata.name doesn't match requested name");
  }
  const everything = selectsEverything(predicate);
  if (everything && !itemName) return { filter: undefined, hasSelector: false };
  const { label, field } = predicate;
  const fieldsOf = resource.custom ? customEntryFields(resource, field) : (e: CacheEntry) => e.fields;
  const matches = (e: CacheEntry): boolean =>
    (itemName === undefined || e.name === itemName) &&
    (label.isEmpty() || label.matches(e.labels)) &&
    (field.isEmpty() || field.matches(fieldsOf(e)));
  const index = indexOf(itemName, label, field, resource.custom !== undefined);
  return { filter: index ? indexedFilter(matches, index) : matches, hasSelector: !everything };
}

/**
 * What every entry the selection accepts has in common, for the watch cache's watcher index:
 * the name, else a field pinned by `=` (a kubelet's spec.nodeName), else a label pinned to one
 * value. Not a field of a custom resource: an entry cached before its definition declared the
 * field lacks it, and customEntryFields reads it from the object instead.
 */
function indexOf(itemName: string | undefined, label: LabelSelector, field: FieldSelector, custom: boolean): FilterIndex | undefined {
  if (itemName !== undefined) return { kind: 'name', value: itemName };
  if (!custom) {
    const pinned = field.requirements.find((r) => r.operator === '=');
    if (pinned) return { kind: 'field', key: pinned.field, value: pinned.value };
  }
  for (const r of label.requirements) {
    const value = label.requiresExactMatch(r.key);
    if (value !== undefined) return { kind: 'label', key: r.key, value };
  }
  return undefined;
}

/**
 * A custom resource entry cached before its definition declared a selectable field lacks that
 * field; its field set is then computed from the object itself rather than read as ''.
 */
function customEntryFields(resource: ResourceInfo, field: FieldSelector): (e: CacheEntry) => Readonly<Record<string, string>> {
  const wanted = field.requirements.map((r) => r.field);
  return (e) => {
    if (e.corrupt || wanted.every((f) => Object.prototype.hasOwnProperty.call(e.fields, f))) return e.fields;
    try {
      return fieldsetFor(resource, JSON.parse(e.bytes.toString('utf8')));
    } catch {
      return e.fields;
    }
  };
}
