// internal/admission/policy/metrics owns the ValidatingAdmissionPolicy metrics under upstream
// kube-apiserver 1.32's names, labels, buckets and help texts:
// apiserver_validating_admission_policy_check_total and _check_duration_seconds, labelled
// policy, policy_binding, error_type (no_error, invalid_error, compile_error) and
// enforcement_action (allow, deny, warn, audit). One observation per binding a request meets.
// The MutatingAdmissionPolicy metrics follow the same pattern under the names upstream gave them
// (1.32 has none; later releases add apiserver_mutating_admission_policy_check_total and
// _check_duration_seconds, ALPHA, labelled policy, policy_binding, error_type).
// Imports: metrics/stability (help decoration); prom-client.

import { Counter, Histogram, type Registry } from 'prom-client';
import { decoratedHelp } from '../../metrics/stability.js';

export type PolicyErrorType = 'no_error' | 'invalid_error' | 'compile_error';
export type EnforcementAction = 'allow' | 'deny' | 'warn' | 'audit';
export type MutationErrorType = 'no_error' | 'invalid_error' | 'compile_error' | 'out_of_budget';

/** Upstream's buckets for policy checks: from a trivial expression to one near the cost limit. */
const CHECK_BUCKETS = [0.0000005, 0.001, 0.01, 0.1, 1.0];

/** A check counter and its latency histogram, `apiserver_<subsystem>_check_total` / `_check_duration_seconds`. */
class CheckMetrics {
  private readonly checks: Counter<string>;
  private readonly latency: Histogram<string>;

  constructor(registry: Registry | undefined, subsystem: string, labelNames: string[], stability: 'ALPHA' | 'BETA', help: { total: string; duration: string }) {
    const registers = registry ? [registry] : [];
    this.checks = new Counter({ name: `apiserver_${subsystem}_check_total`, help: decoratedHelp(help.total, { stability }), labelNames, registers });
    this.latency = new Histogram({ name: `apiserver_${subsystem}_check_duration_seconds`, help: decoratedHelp(help.duration, { stability }), labelNames, buckets: CHECK_BUCKETS, registers });
  }

  observe(labels: Record<string, string>, seconds: number): void {
    this.checks.inc(labels);
    this.latency.observe(labels, seconds);
  }
}

export class PolicyMetrics {
  private readonly metrics: CheckMetrics;

  constructor(registry?: Registry) {
    this.metrics = new CheckMetrics(registry, 'validating_admission_policy', ['policy', 'policy_binding', 'error_type', 'enforcement_action'], 'BETA', {
      total: 'Validation admission policy check total, labeled by policy and further identified by binding and enforcement action taken.',
      duration: 'Validation admission latency for individual validation expressions in seconds, labeled by policy and further including binding and enforcement action taken.',
    });
  }

  observe(policy: string, binding: string, errorType: PolicyErrorType, action: EnforcementAction, seconds: number): void {
    this.metrics.observe({ policy, policy_binding: binding, error_type: errorType, enforcement_action: action }, seconds);
  }
}

export class MutatingPolicyMetrics {
  private readonly metrics: CheckMetrics;

  constructor(registry?: Registry) {
    this.metrics = new CheckMetrics(registry, 'mutating_admission_policy', ['policy', 'policy_binding', 'error_type'], 'ALPHA', {
      total: 'Mutation admission policy check total, labeled by policy and further identified by binding.',
      duration: 'Mutation admission latency for individual mutation expressions in seconds, labeled by policy and binding.',
    });
  }

  /** One binding's run for a request (each param included), with how it went. */
  observe(policy: string, binding: string, errorType: MutationErrorType, seconds: number): void {
    this.metrics.observe({ policy, policy_binding: binding, error_type: errorType }, seconds);
  }
}
