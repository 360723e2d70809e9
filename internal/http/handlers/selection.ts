// internal/http/handlers/selection owns turning a request's selectors (labelSelector,
// fieldSelector, and the item name of a single-object watch) into the entry filter the
// registry and watch cache apply to cached entries. Imports: apierrors, selectors, watchcache (types).

import { errors } from '../../apierrors/status.js';
import { fieldsetFor, parseSelectionPredicate, selectsEverything, type FieldSelector } from '../../selectors/index.js';
import type { ResourceInfo } from '../../schema/catalog.js';
import type { CacheEntry, EntryFilter } from '../../watchcache/types.js';

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
  const filter: EntryFilter = (e) =>
    (itemName === undefined || e.name === itemName) &&
    (label.isEmpty() || label.matches(e.labels)) &&
    (field.isEmpty() || field.matches(fieldsOf(e)));
  return { filter, hasSelector: !everything };
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
