// internal/registry/event-conversion owns converting Events between the core v1 shape (the
// storage: upstream keeps one event store, the core one, and serves events.k8s.io/v1 from it)
// and the events.k8s.io/v1 shape. The two differ only in the names of top-level fields:
//   involvedObject ↔ regarding             message        ↔ note
//   reportingComponent ↔ reportingController source      ↔ deprecatedSource
//   firstTimestamp ↔ deprecatedFirstTimestamp lastTimestamp ↔ deprecatedLastTimestamp
//   count ↔ deprecatedCount
// and metadata, eventTime, series, action, reason, related, reportingInstance and type are the
// same in both, so a conversion is a renaming and a round trip loses nothing. Fields come out
// in the target type's declaration order, as upstream serializes them.
// Imports: conversion.

import { registerConverter, type JsonObject } from './conversion.js';

/** core v1 name → events.k8s.io/v1 name, for the fields that are renamed. */
const CORE_TO_EVENTS: Readonly<Record<string, string>> = {
  involvedObject: 'regarding',
  message: 'note',
  reportingComponent: 'reportingController',
  source: 'deprecatedSource',
  firstTimestamp: 'deprecatedFirstTimestamp',
  lastTimestamp: 'deprecatedLastTimestamp',
  count: 'deprecatedCount',
};

const EVENTS_TO_CORE: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(CORE_TO_EVENTS).map(([core, events]) => [events, core]));

/** Field order of core/v1 Event. */
const CORE_ORDER = [
  'apiVersion', 'kind', 'metadata', 'involvedObject', 'reason', 'message', 'source', 'firstTimestamp', 'lastTimestamp',
  'count', 'type', 'eventTime', 'series', 'action', 'related', 'reportingComponent', 'reportingInstance',
];

/** Field order of events.k8s.io/v1 Event. */
const EVENTS_ORDER = [
  'apiVersion', 'kind', 'metadata', 'eventTime', 'series', 'reportingController', 'reportingInstance', 'action', 'reason',
  'regarding', 'related', 'note', 'type', 'deprecatedSource', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount',
];

function rename(src: JsonObject, names: Readonly<Record<string, string>>, order: readonly string[]): JsonObject {
  const renamed: JsonObject = {};
  for (const [k, v] of Object.entries(src)) {
    const target = Object.prototype.hasOwnProperty.call(names, k) ? names[k]! : k;
    // A field of the target's name that the source also carries (not one of its own fields,
    // so unknown to its schema) must not overwrite the renamed one.
    if (target === k && Object.prototype.hasOwnProperty.call(renamed, k)) continue;
    renamed[target] = structuredClone(v);
  }
  const out: JsonObject = {};
  for (const k of order) if (Object.prototype.hasOwnProperty.call(renamed, k)) out[k] = renamed[k];
  for (const [k, v] of Object.entries(renamed)) if (!Object.prototype.hasOwnProperty.call(out, k)) out[k] = v;
  return out;
}

/** A core v1 Event (JSON) in the events.k8s.io/v1 shape. apiVersion is left as it was. */
export function coreEventToEventsV1(event: JsonObject): JsonObject {
  return rename(event, CORE_TO_EVENTS, EVENTS_ORDER);
}

/** An events.k8s.io/v1 Event (JSON) in the core v1 shape. apiVersion is left as it was. */
export function eventsV1ToCoreEvent(event: JsonObject): JsonObject {
  return rename(event, EVENTS_TO_CORE, CORE_ORDER);
}

/** The upstream group whose Events are stored (core) and the one that serves them too. */
export const EVENTS_GROUP = 'events.k8s.io';

export function registerEventConversion(): void {
  // Both shapes serve the storage resource of core events ('/events').
  registerConverter('/events', (obj, from, to) => {
    const fromCore = from.upstreamGroup === '';
    const toCore = to.upstreamGroup === '';
    if (fromCore === toCore) return structuredClone(obj);
    return toCore ? eventsV1ToCoreEvent(obj) : coreEventToEventsV1(obj);
  });
}
