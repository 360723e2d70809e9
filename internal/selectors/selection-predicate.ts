// internal/selectors/selection-predicate owns the pair of selectors a list, watch or
// deletecollection request carries, parsed and checked once per request, and the one test the
// store and watch cache run per object (labels and fields together). A watch compares the
// predicate on an object's old and new state to turn updates into ADDED or DELETED.
// Imports: label-selector, field-selector, field-sets.

import { FieldSelector } from './field-selector.js';
import { fieldsetFor, parseFieldSelectorFor, type FieldSelectableResource } from './field-sets.js';
import { LabelSelector, parseLabelSelector } from './label-selector.js';

export interface SelectionPredicate {
  readonly label: LabelSelector;
  readonly field: FieldSelector;
}

export const EVERYTHING: SelectionPredicate = { label: LabelSelector.everything(), field: FieldSelector.everything() };

/**
 * Parses the `labelSelector` and `fieldSelector` query values for a resource. Throws a 400
 * StatusError (upstream's message) for bad syntax or a field the resource does not support.
 */
export function parseSelectionPredicate(
  resource: FieldSelectableResource,
  query: { labelSelector?: string | null; fieldSelector?: string | null },
): SelectionPredicate {
  return {
    label: query.labelSelector ? parseLabelSelector(query.labelSelector) : LabelSelector.everything(),
    field: query.fieldSelector ? parseFieldSelectorFor(resource, query.fieldSelector) : FieldSelector.everything(),
  };
}

/** True when neither selector restricts anything, so callers can skip per-object work. */
export const selectsEverything = (p: SelectionPredicate): boolean => p.label.isEmpty() && p.field.isEmpty();

/** Whether `obj` (an object of `resource`, or undefined for "absent") is selected. */
export function predicateMatches(resource: FieldSelectableResource, p: SelectionPredicate, obj: unknown): boolean {
  if (obj === undefined || obj === null) return false;
  if (selectsEverything(p)) return true;
  const labels = (obj as { metadata?: { labels?: Record<string, string> } }).metadata?.labels;
  if (!p.label.matches(labels && typeof labels === 'object' ? labels : undefined)) return false;
  return p.field.isEmpty() || p.field.matches(fieldsetFor(resource, obj));
}
