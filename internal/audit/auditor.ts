// internal/audit/auditor owns turning the audit flags into a running audit log: the policy
// (read once at start; a bad file is a start-up error naming the field), the sink (a rotated
// file or stdout), the queue in front of it and its metrics, and closing them on shutdown. It is
// undefined when auditing is off, so the request path pays one check for it.
// Imports: log, naming, audit/*, prom-client.

import { Registry } from 'prom-client';
import type { Logger } from '../log/logger.js';
import type { Naming } from '../naming/naming.js';
import type { AuditFormat } from './event.js';
import { AuditMetrics, LogBackend, type AuditMode } from './log-backend.js';
import { evaluatePolicy, loadPolicyFile, type AuditDecision, type Policy, type PolicyAttributes } from './policy.js';
import { RotatingFile, StdoutSink, type LineSink } from './rotating-file.js';

export interface AuditConfig {
  policyFile: string | undefined;
  /** `-` = standard output. */
  logPath: string | undefined;
  maxAgeDays: number;
  maxBackups: number;
  maxSizeMB: number;
  format: AuditFormat;
  mode: AuditMode;
  bufferSize: number;
  batchMaxSize: number;
  batchMaxWaitMs: number;
  blockingTimeoutMs: number;
}

/** How long shutdown waits for queued events to reach a slow sink. */
const CLOSE_TIMEOUT_MS = 10_000;

export class Auditor {
  /** `audit.cluster.io/v1` or `audit.k8s.io/v1`: the Event's apiVersion in this naming. */
  readonly apiVersion: string;
  /** Annotation keys in this naming. */
  readonly keys: { deprecated: string; removedRelease: string; decision: string; reason: string };

  constructor(
    private readonly policy: Policy,
    readonly backend: LogBackend,
    readonly metrics: AuditMetrics,
    readonly format: AuditFormat,
    readonly strict: boolean,
    naming: Naming,
  ) {
    this.apiVersion = `${naming.group('audit.k8s.io')}/v1`;
    const authz = naming.group('authorization.k8s.io');
    this.keys = {
      deprecated: `${naming.groupDomain}/deprecated`,
      removedRelease: `${naming.groupDomain}/removed-release`,
      decision: `${authz}/decision`,
      reason: `${authz}/reason`,
    };
  }

  decide(attrs: PolicyAttributes): AuditDecision {
    const d = evaluatePolicy(this.policy, attrs);
    this.metrics.levels.inc({ level: d.level });
    return d;
  }

  /** Serves the audit metrics from the server's registry too. */
  registerMetrics(registry: Registry): void {
    const { events, errors, levels, rejected } = this.metrics;
    registry.registerMetric(events);
    registry.registerMetric(errors);
    registry.registerMetric(levels);
    registry.registerMetric(rejected);
  }

  close(timeoutMs = CLOSE_TIMEOUT_MS): Promise<void> {
    return this.backend.close(timeoutMs);
  }
}

/**
 * The auditor the flags ask for, or undefined when auditing is off (no policy file or no log
 * path, as upstream). Throws a PolicyError for a bad policy file and an Error for a log path
 * that cannot be opened.
 */
export async function createAuditor(config: AuditConfig, naming: Naming, log: Logger): Promise<Auditor | undefined> {
  if (!config.policyFile || !config.logPath) {
    if (config.policyFile || config.logPath) log.warn('auditing is off: it needs both --audit-policy-file and --audit-log-path');
    return undefined;
  }
  // Either spelling of the group is read, whatever the naming: policy files are often shared.
  const policy = loadPolicyFile(config.policyFile, [`${naming.group('audit.k8s.io')}/v1`, 'audit.k8s.io/v1', 'audit.cluster.io/v1']);
  let sink: LineSink;
  if (config.logPath === '-') sink = new StdoutSink();
  else {
    try {
      sink = await RotatingFile.open(config.logPath, { maxSizeBytes: config.maxSizeMB * 1024 * 1024, maxBackups: config.maxBackups, maxAgeDays: config.maxAgeDays });
    } catch (e) {
      throw new Error(`cannot open the audit log ${config.logPath}: ${(e as Error).message}`);
    }
  }
  const metrics = new AuditMetrics(new Registry());
  const backend = new LogBackend(sink, {
    mode: config.mode,
    bufferSize: config.bufferSize,
    batchMaxSize: config.batchMaxSize,
    batchMaxWaitMs: config.batchMaxWaitMs,
    blockingTimeoutMs: config.blockingTimeoutMs,
    metrics,
    log,
  });
  log.warn('audit log enabled', { path: config.logPath, mode: config.mode, format: config.format, rules: policy.rules.length });
  return new Auditor(policy, backend, metrics, config.format, config.mode === 'blocking-strict', naming);
}
