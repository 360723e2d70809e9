import { describe, it, expect } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { ApiCatalog } from '../schema/catalog.js';
import { convertObject, type JsonObject } from './conversion.js';
import { coreEventToEventsV1, eventsV1ToCoreEvent, registerEventConversion } from './event-conversion.js';

registerEventConversion();

const meta = { name: 'e', namespace: 'default', uid: 'u-1', resourceVersion: '7', labels: { a: 'b' } };
const ref = { apiVersion: 'v1', kind: 'Pod', name: 'p', namespace: 'default', uid: 'p-1', fieldPath: 'spec.containers{app}' };
const series = { count: 3, lastObservedTime: '2025-01-01T00:02:00.000000Z' };

// [case, core v1 fields, events.k8s.io/v1 fields]: each pair is the same event in both shapes.
const cases: Array<[string, JsonObject, JsonObject]> = [
  ['renamed subject and message', { involvedObject: ref, message: 'hello' }, { regarding: ref, note: 'hello' }],
  ['reporting controller', { reportingComponent: 'example.com/ctl', reportingInstance: 'i-1' }, { reportingController: 'example.com/ctl', reportingInstance: 'i-1' }],
  ['deprecated source, timestamps and count', {
    source: { component: 'kubelet', host: 'n1' }, firstTimestamp: '2025-01-01T00:00:00Z', lastTimestamp: '2025-01-01T00:05:00Z', count: 4,
  }, {
    deprecatedSource: { component: 'kubelet', host: 'n1' }, deprecatedFirstTimestamp: '2025-01-01T00:00:00Z', deprecatedLastTimestamp: '2025-01-01T00:05:00Z', deprecatedCount: 4,
  }],
  ['fields both shapes share', {
    reason: 'R', type: 'Warning', eventTime: '2025-01-01T00:00:00.000000Z', series, action: 'Act', related: { kind: 'Node', name: 'n1' },
  }, {
    reason: 'R', type: 'Warning', eventTime: '2025-01-01T00:00:00.000000Z', series, action: 'Act', related: { kind: 'Node', name: 'n1' },
  }],
  ['nulls and empty values are renamed, not dropped', { source: {}, firstTimestamp: null, reportingComponent: '' }, { deprecatedSource: {}, deprecatedFirstTimestamp: null, reportingController: '' }],
  ['metadata only', {}, {}],
];

describe('event conversion (upstream pkg/apis/events/v1 Convert_core_Event_To_v1_Event and back)', () => {
  it.each(cases)('%s: core → events.k8s.io/v1', (_name, core, events) => {
    expect(coreEventToEventsV1({ kind: 'Event', metadata: meta, ...core })).toEqual({ kind: 'Event', metadata: meta, ...events });
  });

  it.each(cases)('%s: events.k8s.io/v1 → core', (_name, core, events) => {
    expect(eventsV1ToCoreEvent({ kind: 'Event', metadata: meta, ...events })).toEqual({ kind: 'Event', metadata: meta, ...core });
  });

  it.each(cases)('%s: round trips both ways', (_name, core, events) => {
    const c = { kind: 'Event', metadata: meta, ...core };
    const e = { kind: 'Event', metadata: meta, ...events };
    expect(eventsV1ToCoreEvent(coreEventToEventsV1(c))).toEqual(c);
    expect(coreEventToEventsV1(eventsV1ToCoreEvent(e))).toEqual(e);
  });

  it('orders fields as the target type declares them', () => {
    const core = { apiVersion: 'v1', kind: 'Event', metadata: meta, involvedObject: ref, reason: 'R', message: 'm', source: {}, type: 'Normal', eventTime: 't', action: 'A', reportingComponent: 'c', reportingInstance: 'i' };
    expect(Object.keys(coreEventToEventsV1(core))).toEqual([
      'apiVersion', 'kind', 'metadata', 'eventTime', 'reportingController', 'reportingInstance', 'action', 'reason', 'regarding', 'note', 'type', 'deprecatedSource',
    ]);
    expect(Object.keys(eventsV1ToCoreEvent(coreEventToEventsV1(core)))).toEqual(Object.keys(core));
  });

  it('does not share nested values with its input', () => {
    const core = { involvedObject: { kind: 'Pod' }, series: { count: 2 } };
    const out = coreEventToEventsV1(core);
    (out.regarding as JsonObject).kind = 'Node';
    (out.series as JsonObject).count = 9;
    expect(core).toEqual({ involvedObject: { kind: 'Pod' }, series: { count: 2 } });
  });

  it('lets a renamed field win over a field of the same name the source schema does not have', () => {
    expect(eventsV1ToCoreEvent({ note: 'kept', message: 'stray' })).toEqual({ message: 'kept' });
    expect(eventsV1ToCoreEvent({ message: 'stray', note: 'kept' })).toEqual({ message: 'kept' });
  });
});

describe.each(['kubernetes', 'cluster'] as const)('convertObject between the two Event APIs (naming %s)', (mode) => {
  const catalog = new ApiCatalog(createNaming(mode));
  const core = catalog.resource('', 'v1', 'events')!;
  const events = catalog.resource(createNaming(mode).group('events.k8s.io'), 'v1', 'events')!;

  it('both serve the core event storage', () => {
    expect(events.storageResource).toBe('/events');
    expect(core.storageResource).toBe('/events');
    expect(catalog.storageOf(events)).toBe(core);
  });

  it.each(cases)('%s', (_name, coreFields, eventsFields) => {
    const stored = { apiVersion: 'v1', kind: 'Event', metadata: meta, ...coreFields };
    const served = convertObject(stored, core, events);
    expect(served).toEqual({ apiVersion: events.apiVersion, kind: 'Event', metadata: meta, ...eventsFields });
    expect(convertObject(served, events, core)).toEqual(stored);
  });

  it('returns the object itself when it already has the target apiVersion', () => {
    const stored = { apiVersion: 'v1', kind: 'Event', metadata: meta };
    expect(convertObject(stored, core, core)).toBe(stored);
  });
});
