// internal/printers/pod-printer owns the pod row: the Ready count, the Status reason exactly as
// kubectl users read it (phase, SchedulingGated, Init:N/M, Init:<reason>, CrashLoopBackOff and
// other waiting reasons, Completed, Signal:/ExitCode:, NotReady, Terminating, Unknown), restarts
// with "(5m ago)", IP, node, nominated node and readiness gates. The decision order is
// upstream's; each step's comment says which case it serves.
// Imports: printer-kit, human-duration, table-types.

import { humanDuration, parseTimestamp, timeSince } from './human-duration.js';
import {
  ageCol,
  at,
  col,
  creationOf,
  doc,
  isObj,
  type KindPrinter,
  list,
  metadataOf,
  nameCol,
  nameOf,
  num,
  obj,
  type Obj,
  type PrintContext,
  type PrintedRow,
  str,
} from './printer-kit.js';
import type { TableRowCondition } from './table-types.js';

/** The reason upstream's node lifecycle controller sets on pods of an unreachable node. */
const NODE_LOST_REASON = 'NodeLost';

const SUCCEEDED_CONDITIONS: TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
];
const FAILED_CONDITIONS: TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' },
];

/** Sidecars are init containers with restartPolicy Always; they count as regular containers. */
const isRestartableInit = (container: Obj | undefined): boolean => container?.restartPolicy === 'Always';

const hasCondition = (conditions: unknown[], type: string): boolean =>
  conditions.some((c) => isObj(c) && c.type === type && c.status === 'True');

/** The first condition of `type` decides (upstream's isPodInitializedConditionTrue). */
function firstConditionTrue(conditions: unknown[], type: string): boolean {
  for (const c of conditions) if (isObj(c) && c.type === type) return c.status === 'True';
  return false;
}

/** `Signal:9` / `ExitCode:1` for a terminated container without a reason. */
const terminatedText = (t: Obj): string =>
  num(t.signal) !== 0 ? `Signal:${num(t.signal)}` : `ExitCode:${num(t.exitCode)}`;

export function printPod(pod: unknown, ctx: PrintContext): PrintedRow {
  const spec = obj(at(pod, 'spec'));
  const status = obj(at(pod, 'status'));
  const conditions = list(status.conditions);
  const containers = list(spec.containers);
  const initSpecs = list(spec.initContainers).map(obj);

  let restarts = 0;
  let restartableInitRestarts = 0;
  let totalContainers = containers.length;
  let readyContainers = 0;
  let lastRestart = 0;
  let lastRestartableInitRestart = 0;

  const phase = str(status.phase);
  let reason = str(status.reason) || phase;

  // A pod held back by scheduling gates says so rather than Pending.
  for (const c of conditions) {
    if (isObj(c) && c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }

  const row: PrintedRow = { cells: [] };
  if (phase === 'Succeeded') row.conditions = SUCCEEDED_CONDITIONS;
  else if (phase === 'Failed') row.conditions = FAILED_CONDITIONS;

  const initByName = new Map<string, Obj>();
  for (const c of initSpecs) {
    initByName.set(str(c.name), c);
    if (isRestartableInit(c)) totalContainers++;
  }

  const finishedAt = (cs: Obj): number => parseTimestamp(at(cs, 'lastState', 'terminated', 'finishedAt')) ?? 0;

  // Init containers run in order: the first one that has not finished names the status.
  let initializing = false;
  const initStatuses = list(status.initContainerStatuses).map(obj);
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i]!;
    restarts += num(cs.restartCount);
    lastRestart = Math.max(lastRestart, finishedAt(cs));
    const restartable = isRestartableInit(initByName.get(str(cs.name)));
    if (restartable) {
      restartableInitRestarts += num(cs.restartCount);
      lastRestartableInitRestart = Math.max(lastRestartableInitRestart, finishedAt(cs));
    }
    const terminated = at(cs, 'state', 'terminated');
    const waiting = at(cs, 'state', 'waiting');
    if (isObj(terminated) && num(terminated.exitCode) === 0) continue;
    if (restartable && cs.started === true) {
      if (cs.ready === true) readyContainers++;
      continue;
    }
    if (isObj(terminated)) {
      // A failed init container.
      reason = str(terminated.reason) ? `Init:${str(terminated.reason)}` : `Init:${terminatedText(terminated)}`;
    } else if (isObj(waiting) && str(waiting.reason) !== '' && waiting.reason !== 'PodInitializing') {
      reason = `Init:${str(waiting.reason)}`;
    } else {
      reason = `Init:${i}/${initSpecs.length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || firstConditionTrue(conditions, 'Initialized')) {
    // Regular containers: the first one (in spec order) with a waiting or terminated reason wins,
    // which is why the loop runs backwards and lets earlier containers overwrite later ones.
    restarts = restartableInitRestarts;
    lastRestart = lastRestartableInitRestart;
    let hasRunning = false;
    const statuses = list(status.containerStatuses).map(obj);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i]!;
      restarts += num(cs.restartCount);
      lastRestart = Math.max(lastRestart, finishedAt(cs));
      const waiting = at(cs, 'state', 'waiting');
      const terminated = at(cs, 'state', 'terminated');
      if (isObj(waiting) && str(waiting.reason) !== '') reason = str(waiting.reason);
      else if (isObj(terminated) && str(terminated.reason) !== '') reason = str(terminated.reason);
      else if (isObj(terminated)) reason = terminatedText(terminated);
      else if (cs.ready === true && isObj(at(cs, 'state', 'running'))) {
        hasRunning = true;
        readyContainers++;
      }
    }
    // Some containers completed while others still run: the pod is running, or not ready.
    if (reason === 'Completed' && hasRunning) reason = hasCondition(conditions, 'Ready') ? 'Running' : 'NotReady';
  }

  const deleting = typeof metadataOf(pod).deletionTimestamp === 'string';
  if (deleting && status.reason === NODE_LOST_REASON) reason = 'Unknown';
  else if (deleting && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  let restartsText = String(restarts);
  if (restarts !== 0 && lastRestart !== 0) {
    restartsText = `${restarts} (${humanDuration(ctx.now.getTime() - lastRestart)} ago)`;
  }

  // podIPs[0] is the primary IP; objects written with only podIP convert to podIPs: [podIP].
  const ips = list(status.podIPs).map(obj);
  const podIP = (ips.length > 0 ? str(ips[0]!.ip) : str(status.podIP)) || '<none>';
  const nodeName = str(spec.nodeName) || '<none>';
  const nominated = str(status.nominatedNodeName) || '<none>';

  let readinessGates = '<none>';
  const gates = list(spec.readinessGates).map(obj);
  if (gates.length > 0) {
    let trueCount = 0;
    for (const gate of gates) {
      const c = conditions.find((x) => isObj(x) && x.type === gate.conditionType);
      if (isObj(c) && c.status === 'True') trueCount++;
    }
    readinessGates = `${trueCount}/${gates.length}`;
  }

  row.cells = [
    nameOf(pod),
    `${readyContainers}/${totalContainers}`,
    reason,
    restartsText,
    timeSince(creationOf(pod), ctx.now),
    podIP,
    nodeName,
    nominated,
    readinessGates,
  ];
  return row;
}

export const podPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
    col('Status', 'string', 'The aggregate status of the containers in this pod.'),
    col(
      'Restarts',
      'string',
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    ),
    ageCol(),
    col('IP', 'string', doc('core.v1.PodStatus', 'podIP'), { priority: 1 }),
    col('Node', 'string', doc('core.v1.PodSpec', 'nodeName'), { priority: 1 }),
    col('Nominated Node', 'string', doc('core.v1.PodStatus', 'nominatedNodeName'), { priority: 1 }),
    col('Readiness Gates', 'string', doc('core.v1.PodSpec', 'readinessGates'), { priority: 1 }),
  ],
  row: printPod,
};
