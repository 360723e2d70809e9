// internal/authz/webhook-config owns the shape of one Webhook authorizer's configuration once
// parsed: the `webhook` block of an AuthorizationConfiguration entry, or what the
// --authorization-webhook-* flags map onto (chain.ts does that mapping, authorization-config.ts
// parses and validates the file). The Webhook authorizer (internal/authz/webhook) consumes it.
// Imports: nothing from the project.

export interface WebhookMatchCondition {
  /** A CEL expression over `request` (a SubjectAccessReview v1 spec); already compiled once at load. */
  expression: string;
}

export interface WebhookAuthorizerConfig {
  /** How long an allow answer is cached (default 5m). */
  authorizedTtlMs: number;
  cacheAuthorizedRequests: boolean;
  /** How long a deny / no-opinion answer is cached (default 30s). */
  unauthorizedTtlMs: number;
  cacheUnauthorizedRequests: boolean;
  /** Per call, > 0 and ≤ 30 s. */
  timeoutMs: number;
  subjectAccessReviewVersion: 'v1' | 'v1beta1';
  matchConditionSubjectAccessReviewVersion: 'v1';
  /** What a failed call, a malformed reply or a condition error means. */
  failurePolicy: 'NoOpinion' | 'Deny';
  /** Absolute path of the kubeconfig naming the webhook (HTTPS) and the credentials to call it with. */
  kubeConfigFile: string;
  /** At most 64; all true (or none) = the webhook is called, any false = no opinion. */
  matchConditions: WebhookMatchCondition[];
}
