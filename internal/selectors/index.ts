// internal/selectors is the public face of label and field selectors: parsing the query
// parameters, structured selectors, per-kind selectable fields and matching.
// Imports: its own modules only.

export {
  LabelSelector,
  type LabelOperator,
  type LabelRequirement,
  type Labels,
  type LabelSelectorMeta,
  type LabelSelectorMetaResult,
  parseLabelSelector,
  tryParseLabelSelector,
  labelSelectorFromMeta,
  validateLabelSelectorMeta,
  requirementMatches,
  requirementString,
  formatLabels,
  formatLabelSelectorMeta,
} from './label-selector.js';
export {
  FieldSelector,
  type FieldRequirement,
  type FieldSet,
  parseFieldSelector,
  tryParseFieldSelector,
  escapeFieldValue,
  matchesFields,
} from './field-selector.js';
export {
  type FieldSelectableResource,
  validateFieldSelector,
  parseFieldSelectorFor,
  fieldsetFor,
  FIELD_SETS_VERSION,
  selectableFields,
} from './field-sets.js';
export { labelKeyErrors, labelValueErrors, isLabelKey, isLabelValue, dns1123SubdomainErrors } from './label-syntax.js';
export {
  type SelectionPredicate,
  EVERYTHING,
  parseSelectionPredicate,
  predicateMatches,
  selectsEverything,
} from './selection-predicate.js';
