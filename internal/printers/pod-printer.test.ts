import { describe, expect, it } from 'vitest';
import { createNaming } from '../naming/naming.js';
import { printPod } from './pod-printer.js';
import type { PrintContext } from './printer-kit.js';

const now = new Date('2024-05-01T12:00:00Z');
const ctx: PrintContext = { naming: createNaming('kubernetes'), now, version: 'v1' };
const ago = (ms: number): string => new Date(now.getTime() - ms).toISOString();
const MIN = 60_000;

const running = (name: string, ready = true, restartCount = 0) => ({
  name,
  ready,
  restartCount,
  state: { running: { startedAt: ago(60 * MIN) } },
});
const waiting = (name: string, reason: string, restartCount = 0, finishedMinAgo?: number) => ({
  name,
  ready: false,
  restartCount,
  state: { waiting: { reason } },
  ...(finishedMinAgo !== undefined ? { lastState: { terminated: { exitCode: 1, finishedAt: ago(finishedMinAgo * MIN) } } } : {}),
});
const terminated = (name: string, t: { exitCode?: number; reason?: string; signal?: number }) => ({
  name,
  ready: false,
  restartCount: 0,
  state: { terminated: t },
});

interface PodCase {
  name: string;
  pod: Record<string, unknown>;
  ready: string;
  status: string;
  restarts?: string;
  completed?: 'Succeeded' | 'Failed';
}

const pod = (spec: Record<string, unknown>, status: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
  metadata: { name: 'p', namespace: 'ns', creationTimestamp: ago(90 * MIN), ...metadata },
  spec: { containers: [{ name: 'app' }], ...spec },
  status,
});

const cases: PodCase[] = [
  {
    name: 'running and ready',
    pod: pod({ containers: [{ name: 'a' }, { name: 'b' }] }, { phase: 'Running', containerStatuses: [running('a'), running('b')] }),
    ready: '2/2',
    status: 'Running',
    restarts: '0',
  },
  { name: 'pending without statuses', pod: pod({}, { phase: 'Pending' }), ready: '0/1', status: 'Pending' },
  { name: 'no status at all', pod: pod({}, {}), ready: '0/1', status: '' },
  {
    name: 'scheduling gated',
    pod: pod({}, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] }),
    ready: '0/1',
    status: 'SchedulingGated',
  },
  {
    name: 'status.reason wins over the phase',
    pod: pod({}, { phase: 'Failed', reason: 'Evicted' }),
    ready: '0/1',
    status: 'Evicted',
    completed: 'Failed',
  },
  {
    name: 'crash loop with restarts and last restart age',
    pod: pod({}, { phase: 'Running', containerStatuses: [waiting('app', 'CrashLoopBackOff', 4, 5)] }),
    ready: '0/1',
    status: 'CrashLoopBackOff',
    restarts: '4 (5m ago)',
  },
  {
    name: 'image pull back-off',
    pod: pod({}, { phase: 'Pending', containerStatuses: [waiting('app', 'ImagePullBackOff')] }),
    ready: '0/1',
    status: 'ImagePullBackOff',
  },
  {
    name: 'container creating',
    pod: pod({}, { phase: 'Pending', containerStatuses: [waiting('app', 'ContainerCreating')] }),
    ready: '0/1',
    status: 'ContainerCreating',
  },
  {
    name: 'completed',
    pod: pod({}, { phase: 'Succeeded', containerStatuses: [terminated('app', { exitCode: 0, reason: 'Completed' })] }),
    ready: '0/1',
    status: 'Completed',
    completed: 'Succeeded',
  },
  {
    name: 'terminated with a reason',
    pod: pod({}, { phase: 'Failed', containerStatuses: [terminated('app', { exitCode: 1, reason: 'Error' })] }),
    ready: '0/1',
    status: 'Error',
    completed: 'Failed',
  },
  {
    name: 'terminated without a reason: exit code',
    pod: pod({}, { phase: 'Running', containerStatuses: [terminated('app', { exitCode: 137 })] }),
    ready: '0/1',
    status: 'ExitCode:137',
  },
  {
    name: 'terminated without a reason: signal',
    pod: pod({}, { phase: 'Running', containerStatuses: [terminated('app', { exitCode: 137, signal: 9 })] }),
    ready: '0/1',
    status: 'Signal:9',
  },
  {
    name: 'the first container in spec order names the status',
    pod: pod(
      { containers: [{ name: 'a' }, { name: 'b' }] },
      { phase: 'Running', containerStatuses: [waiting('a', 'CrashLoopBackOff'), waiting('b', 'ErrImagePull')] },
    ),
    ready: '0/2',
    status: 'CrashLoopBackOff',
  },
  {
    name: 'init: first of two running',
    pod: pod(
      { initContainers: [{ name: 'i1' }, { name: 'i2' }] },
      { phase: 'Pending', initContainerStatuses: [{ name: 'i1', restartCount: 0, state: { running: {} } }, { name: 'i2', state: { waiting: { reason: 'PodInitializing' } } }] },
    ),
    ready: '0/1',
    status: 'Init:0/2',
  },
  {
    name: 'init: second of two, PodInitializing is not a reason',
    pod: pod(
      { initContainers: [{ name: 'i1' }, { name: 'i2' }] },
      {
        phase: 'Pending',
        initContainerStatuses: [terminated('i1', { exitCode: 0, reason: 'Completed' }), { name: 'i2', state: { waiting: { reason: 'PodInitializing' } } }],
      },
    ),
    ready: '0/1',
    status: 'Init:1/2',
  },
  {
    name: 'init: crash loop',
    pod: pod({ initContainers: [{ name: 'i1' }] }, { phase: 'Pending', initContainerStatuses: [waiting('i1', 'CrashLoopBackOff', 3, 2)] }),
    ready: '0/1',
    status: 'Init:CrashLoopBackOff',
    restarts: '3 (2m ago)',
  },
  {
    name: 'init: failed with a reason',
    pod: pod({ initContainers: [{ name: 'i1' }] }, { phase: 'Pending', initContainerStatuses: [terminated('i1', { exitCode: 1, reason: 'Error' })] }),
    ready: '0/1',
    status: 'Init:Error',
  },
  {
    name: 'init: failed without a reason',
    pod: pod({ initContainers: [{ name: 'i1' }] }, { phase: 'Pending', initContainerStatuses: [terminated('i1', { exitCode: 2 })] }),
    ready: '0/1',
    status: 'Init:ExitCode:2',
  },
  {
    name: 'init: killed by a signal',
    pod: pod({ initContainers: [{ name: 'i1' }] }, { phase: 'Pending', initContainerStatuses: [terminated('i1', { exitCode: 1, signal: 15 })] }),
    ready: '0/1',
    status: 'Init:Signal:15',
  },
  {
    name: 'sidecar started and ready counts as a container',
    pod: pod(
      { initContainers: [{ name: 'side', restartPolicy: 'Always' }] },
      {
        phase: 'Running',
        initContainerStatuses: [{ name: 'side', started: true, ready: true, restartCount: 1, state: { running: {} } }],
        containerStatuses: [running('app')],
        conditions: [{ type: 'Initialized', status: 'True' }],
      },
    ),
    ready: '2/2',
    status: 'Running',
    restarts: '1',
  },
  {
    name: 'sidecar not started yet',
    pod: pod(
      { initContainers: [{ name: 'side', restartPolicy: 'Always' }] },
      { phase: 'Pending', initContainerStatuses: [{ name: 'side', started: false, ready: false, state: { running: {} } }] },
    ),
    ready: '0/2',
    status: 'Init:0/1',
  },
  {
    name: 'one container completed, one running and pod ready',
    pod: pod(
      { containers: [{ name: 'a' }, { name: 'b' }] },
      {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [terminated('a', { exitCode: 0, reason: 'Completed' }), running('b')],
      },
    ),
    ready: '1/2',
    status: 'Running',
  },
  {
    name: 'one container completed, one running, pod not ready',
    pod: pod(
      { containers: [{ name: 'a' }, { name: 'b' }] },
      {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'False' }],
        containerStatuses: [terminated('a', { exitCode: 0, reason: 'Completed' }), running('b')],
      },
    ),
    ready: '1/2',
    status: 'NotReady',
  },
  {
    name: 'terminating',
    pod: pod({}, { phase: 'Running', containerStatuses: [running('app')] }, { deletionTimestamp: ago(MIN) }),
    ready: '1/1',
    status: 'Terminating',
  },
  {
    name: 'terminating but already succeeded',
    pod: pod({}, { phase: 'Succeeded', containerStatuses: [terminated('app', { exitCode: 0, reason: 'Completed' })] }, { deletionTimestamp: ago(MIN) }),
    ready: '0/1',
    status: 'Completed',
    completed: 'Succeeded',
  },
  {
    name: 'node lost while deleting',
    pod: pod({}, { phase: 'Running', reason: 'NodeLost', containerStatuses: [running('app')] }, { deletionTimestamp: ago(MIN) }),
    ready: '1/1',
    status: 'Unknown',
  },
  {
    name: 'restarts add up and the latest restart dates them',
    pod: pod(
      { containers: [{ name: 'a' }, { name: 'b' }] },
      {
        phase: 'Running',
        containerStatuses: [
          { ...running('a', true, 1), lastState: { terminated: { finishedAt: ago(30 * MIN) } } },
          { ...running('b', true, 2), lastState: { terminated: { finishedAt: ago(10 * MIN) } } },
        ],
      },
    ),
    ready: '2/2',
    status: 'Running',
    restarts: '3 (10m ago)',
  },
  {
    name: 'restarts without a last termination have no age',
    pod: pod({}, { phase: 'Running', containerStatuses: [running('app', true, 2)] }),
    ready: '1/1',
    status: 'Running',
    restarts: '2',
  },
  {
    name: 'initialized pods count only sidecar restarts from init containers',
    pod: pod(
      { initContainers: [{ name: 'i1' }] },
      {
        phase: 'Running',
        conditions: [{ type: 'Initialized', status: 'True' }],
        initContainerStatuses: [{ ...terminated('i1', { exitCode: 1, reason: 'Error' }), restartCount: 5 }],
        containerStatuses: [running('app')],
      },
    ),
    ready: '1/1',
    // The failed init container's reason stays: running containers do not overwrite it.
    status: 'Init:Error',
    restarts: '0',
  },
];

describe('pod Ready, Status and Restarts', () => {
  it.each(cases)('$name', (c) => {
    const row = printPod(c.pod, ctx);
    expect(row.cells[0]).toBe('p');
    expect(row.cells[1]).toBe(c.ready);
    expect(row.cells[2]).toBe(c.status);
    if (c.restarts !== undefined) expect(row.cells[3]).toBe(c.restarts);
    expect(row.cells[4]).toBe('90m');
    if (c.completed) expect(row.conditions?.[0]).toMatchObject({ type: 'Completed', status: 'True', reason: c.completed });
    else expect(row.conditions).toBeUndefined();
  });
});

describe('pod wide cells', () => {
  it('shows the first pod IP, nodes and readiness gates', () => {
    const row = printPod(
      pod(
        { nodeName: 'n1', readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }] },
        {
          phase: 'Running',
          podIP: '10.0.0.9',
          podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }],
          nominatedNodeName: 'n2',
          conditions: [
            { type: 'example.com/lb', status: 'True' },
            { type: 'example.com/dns', status: 'False' },
          ],
        },
      ),
      ctx,
    );
    expect(row.cells.slice(5)).toEqual(['10.0.0.1', 'n1', 'n2', '1/2']);
  });

  it('falls back to status.podIP when podIPs is empty', () => {
    expect(printPod(pod({}, { podIP: '10.1.1.1' }), ctx).cells[5]).toBe('10.1.1.1');
  });

  it('uses <none> for what is missing', () => {
    expect(printPod(pod({}, {}), ctx).cells.slice(5)).toEqual(['<none>', '<none>', '<none>', '<none>']);
  });

  it('never throws on malformed pods', () => {
    for (const bad of [undefined, null, 3, 'x', { spec: 'x', status: { containerStatuses: 'y', conditions: 5 } }]) {
      expect(() => printPod(bad, ctx)).not.toThrow();
    }
  });
});
