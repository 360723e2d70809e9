// internal/admission/policy/metrics owns the ValidatingAdmissionPolicy metrics under upstream
// kube-apiserver 1.32's names, labels, buckets and help texts:
// apiserver_validating_admission_policy_check_total and _check_duration_seconds, labelled
// policy, policy_binding, error_type (no_error, invalid_error, compile_error) and
// enforcement_action (allow, deny, warn, audit). One observation per binding a request meets.
// Imports: metrics/stability (help decoration); prom-client.

import { Counter, Histogram, type Registry } from 'prom-client';
import { decoratedHelp } from '../../metrics/stability.js';

export type PolicyErrorType = 'no_error' | 'invalid_error' | 'compile_error';
export type EnforcementAction = 'allow' | 'deny' | 'warn' | 'audit';

const LABELS = ['policy', 'policy_binding', 'error_type', 'enforcement_action'];

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
      buckets: [0.0000005, 0.001, 0.01, 0.1, 1.0],
      registers,
    });
  }

  observe(policy: string, binding: string, errorType: PolicyErrorType, action: EnforcementAction, seconds: number): void {
    const labels = { policy, policy_binding: binding, error_type: errorType, enforcement_action: action };
    this.checks.inc(labels);
    this.latency.observe(labels, seconds);
  }
}
