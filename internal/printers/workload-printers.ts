// internal/printers/workload-printers owns the tables of the workload controllers and what
// scales them: deployments, replica sets, replication controllers, stateful sets, daemon sets,
// jobs, cron jobs, controller revisions, pod disruption budgets and horizontal pod autoscalers
// (v1 and v2 shapes). Unset replica counts read as the defaults upstream would have stored.
// Imports: printer-kit, human-duration, selectors.

import { formatLabels, formatLabelSelectorMeta, labelSelectorFromMeta } from '../selectors/label-selector.js';
import { humanDuration, parseTimestamp, timeSince } from './human-duration.js';
import {
  age,
  ageCol,
  at,
  boolText,
  col,
  containerCells,
  containersCol,
  doc,
  groupKindText,
  groupOfApiVersion,
  imagesCol,
  intOrStringText,
  isDeleting,
  isObj,
  type KindPrinter,
  list,
  metadataOf,
  NAME_DOC,
  nameCol,
  nameOf,
  num,
  obj,
  type Obj,
  quantityText,
  str,
  strMap,
} from './printer-kit.js';

/** spec.replicas defaults to 1 when a workload is created without it. */
const desiredReplicas = (o: unknown): number => num(at(o, 'spec', 'replicas'), 1);
const templateContainers = (o: unknown): [string, string] => containerCells(at(o, 'spec', 'template', 'spec', 'containers'));

const deploymentPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Ready', 'string', 'Number of the pod with ready state'),
    col('Up-to-date', 'string', doc('apps.v1.DeploymentStatus', 'updatedReplicas')),
    col('Available', 'string', doc('apps.v1.DeploymentStatus', 'availableReplicas')),
    ageCol(),
    containersCol(),
    imagesCol(),
    col('Selector', 'string', doc('apps.v1.DeploymentSpec', 'selector'), { priority: 1 }),
  ],
  row(d, ctx) {
    const status = obj(at(d, 'status'));
    const [names, images] = templateContainers(d);
    // Unlike other workloads, an absent selector prints as '' and an invalid one as <invalid>.
    const sel = labelSelectorFromMeta(at(d, 'spec', 'selector'));
    return {
      cells: [
        nameOf(d),
        `${num(status.readyReplicas)}/${desiredReplicas(d)}`,
        num(status.updatedReplicas),
        num(status.availableReplicas),
        age(d, ctx),
        names,
        images,
        sel.ok ? sel.selector.toString() : '<invalid>',
      ],
    };
  },
};

const replicaSetPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Desired', 'integer', doc('apps.v1.ReplicaSetSpec', 'replicas')),
    col('Current', 'integer', doc('apps.v1.ReplicaSetStatus', 'replicas')),
    col('Ready', 'integer', doc('apps.v1.ReplicaSetStatus', 'readyReplicas')),
    ageCol(),
    containersCol(),
    imagesCol(),
    col('Selector', 'string', doc('apps.v1.ReplicaSetSpec', 'selector'), { priority: 1 }),
  ],
  row(rs, ctx) {
    const [names, images] = templateContainers(rs);
    return {
      cells: [
        nameOf(rs),
        desiredReplicas(rs),
        num(at(rs, 'status', 'replicas')),
        num(at(rs, 'status', 'readyReplicas')),
        age(rs, ctx),
        names,
        images,
        formatLabelSelectorMeta(at(rs, 'spec', 'selector')),
      ],
    };
  },
};

const replicationControllerPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Desired', 'integer', doc('core.v1.ReplicationControllerSpec', 'replicas')),
    col('Current', 'integer', doc('core.v1.ReplicationControllerStatus', 'replicas')),
    col('Ready', 'integer', doc('core.v1.ReplicationControllerStatus', 'readyReplicas')),
    ageCol(),
    containersCol(),
    imagesCol(),
    col('Selector', 'string', doc('core.v1.ReplicationControllerSpec', 'selector'), { priority: 1 }),
  ],
  row(rc, ctx) {
    const [names, images] = templateContainers(rc);
    return {
      cells: [
        nameOf(rc),
        desiredReplicas(rc),
        num(at(rc, 'status', 'replicas')),
        num(at(rc, 'status', 'readyReplicas')),
        age(rc, ctx),
        names,
        images,
        formatLabels(strMap(at(rc, 'spec', 'selector'))),
      ],
    };
  },
};

const statefulSetPrinter: KindPrinter = {
  columns: [nameCol(), col('Ready', 'string', 'Number of the pod with ready state'), ageCol(), containersCol(), imagesCol()],
  row(sts, ctx) {
    const [names, images] = templateContainers(sts);
    return {
      cells: [nameOf(sts), `${num(at(sts, 'status', 'readyReplicas'))}/${desiredReplicas(sts)}`, age(sts, ctx), names, images],
    };
  },
};

const daemonSetPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Desired', 'integer', doc('apps.v1.DaemonSetStatus', 'desiredNumberScheduled')),
    col('Current', 'integer', doc('apps.v1.DaemonSetStatus', 'currentNumberScheduled')),
    col('Ready', 'integer', doc('apps.v1.DaemonSetStatus', 'numberReady')),
    col('Up-to-date', 'integer', doc('apps.v1.DaemonSetStatus', 'updatedNumberScheduled')),
    col('Available', 'integer', doc('apps.v1.DaemonSetStatus', 'numberAvailable')),
    col('Node Selector', 'string', doc('core.v1.PodSpec', 'nodeSelector')),
    ageCol(),
    containersCol(),
    imagesCol(),
    col('Selector', 'string', doc('apps.v1.DaemonSetSpec', 'selector'), { priority: 1 }),
  ],
  row(ds, ctx) {
    const s = obj(at(ds, 'status'));
    const [names, images] = templateContainers(ds);
    return {
      cells: [
        nameOf(ds),
        num(s.desiredNumberScheduled),
        num(s.currentNumberScheduled),
        num(s.numberReady),
        num(s.updatedNumberScheduled),
        num(s.numberAvailable),
        formatLabels(strMap(at(ds, 'spec', 'template', 'spec', 'nodeSelector'))),
        age(ds, ctx),
        names,
        images,
        formatLabelSelectorMeta(at(ds, 'spec', 'selector')),
      ],
    };
  },
};

/** The first condition of `type` decides, as upstream's hasJobCondition reads it. */
function jobCondition(job: unknown, type: string): boolean {
  for (const c of list(at(job, 'status', 'conditions'))) if (isObj(c) && c.type === type) return c.status === 'True';
  return false;
}

export function jobStatusText(job: unknown): string {
  if (jobCondition(job, 'Complete')) return 'Complete';
  if (jobCondition(job, 'Failed')) return 'Failed';
  if (isDeleting(job)) return 'Terminating';
  if (jobCondition(job, 'Suspended')) return 'Suspended';
  if (jobCondition(job, 'FailureTarget')) return 'FailureTarget';
  return 'Running';
}

const jobPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Status', 'string', 'Status of the job.'),
    col('Completions', 'string', doc('batch.v1.JobStatus', 'succeeded')),
    col('Duration', 'string', 'Time required to complete the job.'),
    ageCol(),
    containersCol(),
    imagesCol(),
    col('Selector', 'string', doc('batch.v1.JobSpec', 'selector'), { priority: 1 }),
  ],
  row(job, ctx) {
    const spec = obj(at(job, 'spec'));
    const succeeded = num(at(job, 'status', 'succeeded'));
    let completions: string;
    if (typeof spec.completions === 'number') completions = `${succeeded}/${spec.completions}`;
    else {
      const parallelism = num(spec.parallelism);
      completions = parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
    }
    const start = parseTimestamp(at(job, 'status', 'startTime'));
    const end = parseTimestamp(at(job, 'status', 'completionTime'));
    let duration = '';
    if (start !== undefined) duration = humanDuration((end ?? ctx.now.getTime()) - start);
    const [names, images] = templateContainers(job);
    return {
      cells: [
        nameOf(job),
        jobStatusText(job),
        completions,
        duration,
        age(job, ctx),
        names,
        images,
        formatLabelSelectorMeta(spec.selector),
      ],
    };
  },
};

const cronJobPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Schedule', 'string', doc('batch.v1.CronJobSpec', 'schedule')),
    col('Timezone', 'string', doc('batch.v1.CronJobSpec', 'timeZone')),
    col('Suspend', 'boolean', doc('batch.v1.CronJobSpec', 'suspend')),
    col('Active', 'integer', doc('batch.v1.CronJobStatus', 'active')),
    col('Last Schedule', 'string', doc('batch.v1.CronJobStatus', 'lastScheduleTime')),
    ageCol(),
    containersCol(),
    imagesCol(),
    col('Selector', 'string', doc('batch.v1.JobSpec', 'selector'), { priority: 1 }),
  ],
  row(cj, ctx) {
    const spec = obj(at(cj, 'spec'));
    const last = at(cj, 'status', 'lastScheduleTime');
    const [names, images] = containerCells(at(spec, 'jobTemplate', 'spec', 'template', 'spec', 'containers'));
    return {
      cells: [
        nameOf(cj),
        str(spec.schedule),
        typeof spec.timeZone === 'string' ? spec.timeZone : '<none>',
        // suspend defaults to false on create.
        boolText(spec.suspend ?? false),
        list(at(cj, 'status', 'active')).length,
        last === undefined || last === null ? '<none>' : timeSince(last, ctx.now),
        age(cj, ctx),
        names,
        images,
        formatLabelSelectorMeta(at(spec, 'jobTemplate', 'spec', 'selector')),
      ],
    };
  },
};

const controllerRevisionPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Controller', 'string', 'Controller of the object'),
    col('Revision', 'string', doc('apps.v1.ControllerRevision', 'revision')),
    ageCol(),
  ],
  row(cr, ctx) {
    const owner = list(metadataOf(cr).ownerReferences)
      .map(obj)
      .find((r) => r.controller === true);
    let controller = '<none>';
    if (owner) {
      const gk = groupKindText(groupOfApiVersion(str(owner.apiVersion)), str(owner.kind));
      controller = gk ? `${gk.toLowerCase()}/${str(owner.name)}` : str(owner.name);
    }
    return { cells: [nameOf(cr), controller, num(at(cr, 'revision')), age(cr, ctx)] };
  },
};

const pdbPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Min Available', 'string', 'The minimum number of pods that must be available.'),
    col('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable.'),
    col('Allowed Disruptions', 'integer', 'Calculated number of pods that may be disrupted at this time.'),
    ageCol(),
  ],
  row(pdb, ctx) {
    const spec = obj(at(pdb, 'spec'));
    const text = (v: unknown): string => (v === undefined || v === null ? 'N/A' : intOrStringText(v));
    return {
      cells: [
        nameOf(pdb),
        text(spec.minAvailable),
        text(spec.maxUnavailable),
        num(at(pdb, 'status', 'disruptionsAllowed')),
        age(pdb, ctx),
      ],
    };
  },
};

// --- horizontal pod autoscalers -----------------------------------------------------------------

/** autoscaling/v1 objects in the v2 shape, as upstream's conversion to the internal type does. */
function hpaMetrics(hpa: unknown, version: string): { specs: Obj[]; statuses: Obj[] } {
  const spec = obj(at(hpa, 'spec'));
  if (version === 'v1' && !Array.isArray(spec.metrics)) {
    // v1 only knows a CPU utilisation target; created without one, upstream defaults it to 80%.
    const target = num(spec.targetCPUUtilizationPercentage, 80);
    const current = at(hpa, 'status', 'currentCPUUtilizationPercentage');
    return {
      specs: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: target } } }],
      statuses:
        typeof current === 'number'
          ? [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: current } } }]
          : [],
    };
  }
  return { specs: list(spec.metrics).map(obj), statuses: list(at(hpa, 'status', 'currentMetrics')).map(obj) };
}

/** Upstream's formatHPAMetrics: `cpu: 40%/80%`, `5/10 (avg)`, at most two, then ` + N more...`. */
export function formatHPAMetrics(specs: readonly Obj[], statuses: readonly Obj[]): string {
  if (specs.length === 0) return '<none>';
  const out: string[] = [];
  specs.forEach((spec, i) => {
    const st = statuses[i];
    const q = (v: unknown): string => quantityText(v);
    switch (spec.type) {
      case 'External':
      case 'Object': {
        const key = spec.type === 'External' ? 'external' : 'object';
        const target = obj(at(spec, key, 'target'));
        const current = st ? at(st, key, 'current') : undefined;
        if (target.averageValue !== undefined) {
          const cur = isObj(current) && current.averageValue !== undefined ? q(current.averageValue) : '<unknown>';
          out.push(`${cur}/${q(target.averageValue)} (avg)`);
        } else {
          const cur = isObj(current) ? q(current.value) : '<unknown>';
          out.push(`${cur}/${q(target.value)}`);
        }
        break;
      }
      case 'Pods': {
        const current = st ? at(st, 'pods', 'current') : undefined;
        const cur = isObj(current) ? q(current.averageValue) : '<unknown>';
        out.push(`${cur}/${q(at(spec, 'pods', 'target', 'averageValue'))}`);
        break;
      }
      case 'Resource':
      case 'ContainerResource': {
        const key = spec.type === 'Resource' ? 'resource' : 'containerResource';
        const name = str(at(spec, key, 'name'));
        const target = obj(at(spec, key, 'target'));
        const current = st ? at(st, key, 'current') : undefined;
        if (target.averageValue !== undefined) {
          const cur = isObj(current) ? q(current.averageValue) : '<unknown>';
          out.push(`${name}: ${cur}/${q(target.averageValue)}`);
        } else {
          const cur = isObj(current) && typeof current.averageUtilization === 'number' ? `${current.averageUtilization}%` : '<unknown>';
          const tgt = typeof target.averageUtilization === 'number' ? `${target.averageUtilization}%` : '<auto>';
          out.push(`${name}: ${cur}/${tgt}`);
        }
        break;
      }
      default:
        out.push('<unknown type>');
    }
  });
  const max = 2;
  if (out.length > max) return `${out.slice(0, max).join(', ')} + ${out.length - max} more...`;
  return out.join(', ');
}

const hpaPrinter: KindPrinter = {
  columns: [
    nameCol(),
    col('Reference', 'string', doc('autoscaling.v2.HorizontalPodAutoscalerSpec', 'scaleTargetRef')),
    col('Targets', 'string', doc('autoscaling.v2.HorizontalPodAutoscalerSpec', 'metrics')),
    col('MinPods', 'string', doc('autoscaling.v2.HorizontalPodAutoscalerSpec', 'minReplicas')),
    col('MaxPods', 'string', doc('autoscaling.v2.HorizontalPodAutoscalerSpec', 'maxReplicas')),
    col('Replicas', 'string', doc('autoscaling.v2.HorizontalPodAutoscalerStatus', 'currentReplicas')),
    ageCol(),
  ],
  row(hpa, ctx) {
    const spec = obj(at(hpa, 'spec'));
    const ref = obj(spec.scaleTargetRef);
    const { specs, statuses } = hpaMetrics(hpa, ctx.version);
    return {
      cells: [
        nameOf(hpa),
        `${str(ref.kind)}/${str(ref.name)}`,
        formatHPAMetrics(specs, statuses),
        typeof spec.minReplicas === 'number' ? String(spec.minReplicas) : '<unset>',
        num(spec.maxReplicas),
        num(at(hpa, 'status', 'currentReplicas')),
        age(hpa, ctx),
      ],
    };
  },
};

/**
 * The autoscaling/v1 Scale a built-in scale sub-resource answers (upstream's printScale, which
 * its ScaleREST.ConvertToTable reaches): the name column carries no `name` format upstream.
 */
const scalePrinter: KindPrinter = {
  columns: [
    col('Name', 'string', NAME_DOC),
    col('Desired', 'integer', doc('autoscaling.v1.ScaleSpec', 'replicas')),
    col('Available', 'integer', doc('autoscaling.v1.ScaleStatus', 'replicas')),
    ageCol(),
  ],
  row: (s, ctx) => ({ cells: [nameOf(s), num(at(s, 'spec', 'replicas')), num(at(s, 'status', 'replicas')), age(s, ctx)] }),
};

/** The table of a built-in scale sub-resource's Scale objects. */
export const SCALE_TABLE = { upstreamGroup: 'autoscaling', resource: 'scale', version: 'v1' } as const;

/** Keyed by `<upstream group>/<resource>`. */
export const workloadPrinters: Readonly<Record<string, KindPrinter>> = {
  'autoscaling/scale': scalePrinter,
  'apps/deployments': deploymentPrinter,
  'apps/replicasets': replicaSetPrinter,
  '/replicationcontrollers': replicationControllerPrinter,
  'apps/statefulsets': statefulSetPrinter,
  'apps/daemonsets': daemonSetPrinter,
  'apps/controllerrevisions': controllerRevisionPrinter,
  'batch/jobs': jobPrinter,
  'batch/cronjobs': cronJobPrinter,
  'policy/poddisruptionbudgets': pdbPrinter,
  'autoscaling/horizontalpodautoscalers': hpaPrinter,
};
