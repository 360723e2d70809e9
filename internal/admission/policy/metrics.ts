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

const LABELS = ['policy', 'policy_binding', 'error_type', 'enforcement_action'];
/** Upstream's buckets for policy checks: from a trivial expression to one near the cost limit. */
const CHECK_BUCKETS = [0.0000005, 0.001, 0.01, 0.1, 1.0];

export class PolicyMetrics {
  private readonly checks: Counter<string>;
  private readonly latency: Histogram<string>;

  constructor(registry?: Registry) {
    const registers = registry ? [registry] : [];
    this.checks = new Counter({
      name: 'apiserver_validating_admission_policy_check_total',
      help: decoratedHelp('Validation admission policy check total, labeled by policy and further identified by binding and enforcement action taken.', { stability: 'BETA' }),
      labelNames: LABELS,
      registers,
    });
    this.latency = new Histogram({
      name: 'apiserver_validating_admission_policy_check_duration_seconds',
      help: decoratedHelp('Validation admission latency for individual validation expressions in seconds, labeled by policy and further including binding and enforcement action taken.', { stability: 'BETA' }),
      labelNames: LABELS,
      buckets: CHECK_BUCKETS,
      registers,
    });
  }

  observe(policy: string, binding: string, errorType: PolicyErrorType, action: EnforcementAction, seconds: number): void {
    const labels = { policy, policy_binding: binding, error_type: errorType, enforcement_action: action };
    this.checks.inc(labels);
    this.latency.observe(labels, seconds);
  }
}

export type MutationErrorType = 'no_error' | 'invalid_error' | 'compile_error' | 'out_of_budget';
const MUTATING_LABELS = ['policy', 'policy_binding', 'error_type'];

export class MutatingPolicyMetrics {
  private readonly checks: Counter<string>;
  private readonly latency: Histogram<string>;

  constructor(registry?: Registry) {
    const registers = registry ? [registry] : [];
    this.checks = new Counter({
      name: 'apiserver_mutating_admission_policy_check_total',
      help: decoratedHelp('Mutation admission policy check total, labeled by policy and further identified by binding.', { stability: 'ALPHA' }),
      labelNames: MUTATING_LABELS,
      registers,
    });
    this.latency = new Histogram({
      name: 'apiserver_mutating_admission_policy_check_duration_seconds',
      help: decoratedHelp('Mutation admission latency for individual mutation expressions in seconds, labeled by policy and binding.', { stability: 'ALPHA' }),
      labelNames: MUTATING_LABELS,
      buckets: CHECK_BUCKETS,
      registers,
    });
  }

  /** One binding's run for a request (each param included), with how it went. */
  observe(policy: string, binding: string, errorType: MutationErrorType, seconds: number): void {
    const labels = { policy, policy_binding: binding, error_type: errorType };
    this.checks.inc(labels);
    this.latency.observe(labels, seconds);
  }
}
