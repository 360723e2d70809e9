// internal/authz/webhook/metrics owns the authorization webhook's Prometheus metrics under
// upstream kube-apiserver 1.32's names, labels, buckets and help texts: round trips
// (apiserver_authorization_webhook_evaluations_total, _duration_seconds), fail-open answers
// (_evaluations_fail_open_total) and the match-condition metrics every authorizer with
// matchConditions reports (apiserver_authorization_match_condition_*, labelled type and name).
// Several webhook authorizers share one registry, so a metric already registered is reused.
// Imports: metrics/stability (help decoration); prom-client.

import { Counter, Histogram, type Registry } from 'prom-client';
import { decoratedHelp } from '../../metrics/stability.js';

/** prom-client's default buckets are Prometheus' DefBuckets, which upstream uses for the duration. */
const DEF_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const MATCH_CONDITION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.1, 0.2, 0.25];

/** `success`, `timeout`, `error` (upstream also has `canceled`, for a request whose context ended). */
export type WebhookResult = 'success' | 'timeout' | 'error';

export interface WebhookMetrics {
  evaluation(name: string, result: WebhookResult, seconds: number): void;
  failOpen(name: string, result: Exclude<WebhookResult, 'success'>): void;
  matchConditionEvaluation(type: string, name: string, seconds: number): void;
  matchConditionError(type: string, name: string): void;
  matchConditionExclusion(type: string, name: string): void;
}

function counter(registry: Registry | undefined, name: string, help: string, labelNames: string[]): Counter<string> {
  const existing = registry?.getSingleMetric(name);
  if (existing) return existing as Counter<string>;
  return new Counter({ name, help: decoratedHelp(help, { stability: 'ALPHA' }), labelNames, registers: registry ? [registry] : [] });
}

function histogram(registry: Registry | undefined, name: string, help: string, labelNames: string[], buckets: number[]): Histogram<string> {
  const existing = registry?.getSingleMetric(name);
  if (existing) return existing as Histogram<string>;
  return new Histogram({ name, help: decoratedHelp(help, { stability: 'ALPHA' }), labelNames, buckets, registers: registry ? [registry] : [] });
}

/** The metrics in `registry`, or unregistered ones (counted, never served) without one. */
export function webhookMetrics(registry?: Registry): WebhookMetrics {
  const evaluations = counter(registry, 'apiserver_authorization_webhook_evaluations_total', 'Round-trips to authorization webhooks.', ['name', 'result']);
  const duration = histogram(registry, 'apiserver_authorization_webhook_duration_seconds', 'Request latency in seconds.', ['name', 'result'], DEF_BUCKETS);
  const failOpen = counter(registry, 'apiserver_authorization_webhook_evaluations_fail_open_total', 'NoOpinion results due to webhook timeout or error.', ['name', 'result']);
  const mcErrors = counter(
    registry,
    'apiserver_authorization_match_condition_evaluation_errors_total',
    'Total number of errors when an authorization webhook encounters a match condition error split by authorizer type and name.',
    ['type', 'name'],
  );
  const mcExclusions = counter(
    registry,
    'apiserver_authorization_match_condition_exclusions_total',
    'Total number of exclusions when an authorization webhook is skipped because match conditions exclude it.',
    ['type', 'name'],
  );
  const mcSeconds = histogram(
    registry,
    'apiserver_authorization_match_condition_evaluation_seconds',
    'Authorization match condition evaluation time in seconds, split by authorizer type and name.',
    ['type', 'name'],
    MATCH_CONDITION_BUCKETS,
  );
  return {
    evaluation(name, result, seconds) {
      evaluations.inc({ name, result });
      duration.observe({ name, result }, seconds);
    },
    failOpen: (name, result) => failOpen.inc({ name, result }),
    matchConditionEvaluation: (type, name, seconds) => mcSeconds.observe({ type, name }, seconds),
    matchConditionError: (type, name) => mcErrors.inc({ type, name }),
    matchConditionExclusion: (type, name) => mcExclusions.inc({ type, name }),
  };
}
