// internal/admission/webhook/metrics owns the admission webhook metrics under upstream
// kube-apiserver 1.32's names, labels and buckets: the call latency
// (apiserver_admission_webhook_admission_duration_seconds), calls by answer
// (apiserver_admission_webhook_request_total), rejections (apiserver_admission_webhook_rejection_count)
// and calls whose failure was ignored (apiserver_admission_webhook_fail_open_count).
// Imports: metrics/stability; prom-client.

import { Counter, Histogram, type Registry } from 'prom-client';
import { decoratedHelp } from '../../metrics/stability.js';

/** `admit` for mutating webhooks, `validate` for validating ones, as upstream's step types. */
export type StepType = 'admit' | 'validate';
/** Upstream's WebhookRejectionErrorType values. */
export type RejectionErrorType = 'calling_webhook_error' | 'apiserver_internal_error' | 'no_error';

export interface AdmissionWebhookMetrics {
  observe(name: string, type: StepType, operation: string, rejected: boolean, code: number, seconds: number): void;
  rejection(name: string, type: StepType, operation: string, errorType: RejectionErrorType, code: number): void;
  failOpen(name: string, type: StepType): void;
}

function metric<T>(registry: Registry | undefined, name: string, make: (registers: Registry[]) => T): T {
  const existing = registry?.getSingleMetric(name);
  return existing ? (existing as unknown as T) : make(registry ? [registry] : []);
}

export function admissionWebhookMetrics(registry?: Registry): AdmissionWebhookMetrics {
  const duration = metric(registry, 'apiserver_admission_webhook_admission_duration_seconds', (registers) =>
    new Histogram({
      name: 'apiserver_admission_webhook_admission_duration_seconds',
      help: decoratedHelp('Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).', { stability: 'STABLE' }),
      labelNames: ['name', 'type', 'operation', 'rejected'],
      buckets: [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25],
      registers,
    }),
  );
  const requests = metric(registry, 'apiserver_admission_webhook_request_total', (registers) =>
    new Counter({
      name: 'apiserver_admission_webhook_request_total',
      help: decoratedHelp('Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.', { stability: 'ALPHA' }),
      labelNames: ['name', 'type', 'operation', 'code', 'rejected'],
      registers,
    }),
  );
  const rejections = metric(registry, 'apiserver_admission_webhook_rejection_count', (registers) =>
    new Counter({
      name: 'apiserver_admission_webhook_rejection_count',
      help: decoratedHelp('Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.', { stability: 'ALPHA' }),
      labelNames: ['name', 'type', 'operation', 'error_type', 'rejection_code'],
      registers,
    }),
  );
  const failOpen = metric(registry, 'apiserver_admission_webhook_fail_open_count', (registers) =>
    new Counter({
      name: 'apiserver_admission_webhook_fail_open_count',
      help: decoratedHelp('Admission webhook fail open count, identified by name and broken out for each admission type (validating or mutating).', { stability: 'ALPHA' }),
      labelNames: ['name', 'type'],
      registers,
    }),
  );
  const bounded = (code: number): string => String(Math.min(code, 600));
  return {
    observe(name, type, operation, rejected, code, seconds) {
      duration.observe({ name, type, operation, rejected: String(rejected) }, seconds);
      requests.inc({ name, type, operation, code: bounded(code), rejected: String(rejected) });
    },
    rejection(name, type, operation, errorType, code) {
      rejections.inc({ name, type, operation, error_type: errorType, rejection_code: bounded(code) });
    },
    failOpen(name, type) {
      failOpen.inc({ name, type });
    },
  };
}
