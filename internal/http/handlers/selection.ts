// internal/http/handlers/selection owns turning a request's selectors (labelSelector,
// fieldSelector, and the item name of a single-object watch) into the entry filter the
// registry and watch cache apply to cached entries. Imports: selectors, watchcache (types).

import { parseSelectionPredicate, selectsEverything } from '../../selectors/index.js';
import type { ResourceInfo } from '../../schema/catalog.js';
import type { EntryFilter } from '../../watchcache/types.js';

export interface Selection {
  filter: EntryFilter | undefined;
  /** A label or field selector was given (remainingItemCount is then omitted). */
  hasSelector: boolean;
}

export function selectionFor(resource: ResourceInfo, query: URLSearchParams, itemName?: string): Selection {
  const predicate = parseSelectionPredicate(resource, { labelSelector: query.get('labelSelector'), fieldSelector: query.get('fieldSelector') });
  const everything = selectsEverything(predicate);
  if (everything && !itemName) return { filter: undefined, hasSelector: false };
  const { label, field } = predicate;
  const filter: EntryFilter = (e) =>
    (itemName === undefined || e.name === itemName) &&
    (label.isEmpty() || label.matches(e.labels)) &&
    (field.isEmpty() || field.matches(e.fields));
  return { filter, hasSelector: !everything };
}
