// internal/apierrors/status owns API errors: the Status object every failed request answers
// with, and the constructors for each reason with upstream's message forms (clients parse
// reasons and codes, people read messages). Handlers throw StatusError; one error handler in
// internal/http writes it. Imports: field-errors.

import { type FieldError, fieldErrorBody, formatFieldError } from './field-errors.js';

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'Invalid'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout'
  // Upstream's StatusReasonUnknown: errors it does not classify (its JSON then has no reason).
  | '';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  /** List metadata: set only on an expired continue token, carrying a token for the rest. */
  metadata: { continue?: string };
  status: 'Failure' | 'Success';
  message: string;
  /** Absent for an unclassified error (StatusReasonUnknown), as upstream's omitempty leaves it. */
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** A group plus a resource (`deployments.apps`) or kind (`Deployment.apps`) as messages print it. */
export interface Qualified {
  group: string;
  /** Resource plural for most errors; Kind for Invalid. */
  name: string;
}

export const qualifiedString = (q: Qualified): string => (q.group ? `${q.name}.${q.group}` : q.name);

export class StatusError extends Error {
  constructor(readonly status: Status) {
    super(status.message);
    this.name = 'StatusError';
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): StatusReason {
    return this.status.reason ?? '';
  }
}

function statusError(code: number, reason: StatusReason, message: string, details?: StatusDetails): StatusError {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, ...(reason ? { reason } : {}), code };
  if (details && Object.keys(details).length > 0) status.details = details;
  return new StatusError(status);
}

const detailsFor = (q: Qualified, name?: string): StatusDetails => {
  const d: StatusDetails = {};
  if (name) d.name = name;
  if (q.group) d.group = q.group;
  d.kind = q.name;
  return d;
};

export const errors = {
  badRequest: (message: string, causes?: StatusCause[]): StatusError =>
    statusError(400, 'BadRequest', message, causes ? { causes } : undefined),
  unauthorized: (message = 'Unauthorized'): StatusError => statusError(401, 'Unauthorized', message),
  forbidden: (q: Qualified, name: string | undefined, reason: string): StatusError =>
    statusError(
      403,
      'Forbidden',
      name ? `${qualifiedString(q)} "${name}" is forbidden: ${reason}` : `${qualifiedString(q)} is forbidden: ${reason}`,
      detailsFor(q, name),
    ),
  /** A 403 that is not about a resource (non-resource paths). */
  forbiddenMessage: (message: string): StatusError => statusError(403, 'Forbidden', message),
  notFound: (q: Qualified, name?: string): StatusError =>
    statusError(
      404,
      'NotFound',
      name !== undefined ? `${qualifiedString(q)} "${name}" not found` : `${qualifiedString(q)} not found`,
      detailsFor(q, name),
    ),
  /** 404 for a path the server does not serve at all; `hint` follows upstream's text after `; `. */
  pathNotFound: (hint?: string): StatusError => statusError(404, 'NotFound', `the server could not find the requested resource${hint ? `; ${hint}` : ''}`),
  methodNotSupported: (q?: Qualified, method?: string): StatusError =>
    statusError(
      405,
      'MethodNotAllowed',
      q && method
        ? `${method} is not supported on resources of kind "${qualifiedString(q)}"`
        : 'the server does not allow this method on the requested resource',
      q ? detailsFor(q) : undefined,
    ),
  notAcceptable: (supported: readonly string[]): StatusError =>
    statusError(
      406,
      'NotAcceptable',
      // Upstream's negotiation error text; "the server was unable to respond with a content type
      // that the client supports" is what client-go prints for a 406 without a Status body.
      `only the following media types are accepted: ${supported.join(', ')}`,
    ),
  alreadyExists: (q: Qualified, name: string): StatusError =>
    statusError(409, 'AlreadyExists', `${qualifiedString(q)} "${name}" already exists`, detailsFor(q, name)),
  conflict: (q: Qualified, name: string, detail: string): StatusError =>
    statusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedString(q)} "${name}": ${detail}`, detailsFor(q, name)),
  gone: (message: string): StatusError => statusError(410, 'Gone', message),
  expired: (message: string): StatusError => statusError(410, 'Expired', message),
  requestEntityTooLarge: (limit: number): StatusError =>
    statusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`),
  /** Upstream's wording, which names only what is accepted, not what was sent. */
  unsupportedMediaType: (supported: readonly string[]): StatusError =>
    statusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${supported.join(', ')}`),
  /** 422 with one cause per field. `kind` is the Kind, as upstream prints `Deployment.apps "x" is invalid`. */
  invalid: (kind: Qualified, name: string, fieldErrs: readonly FieldError[]): StatusError => {
    const list = fieldErrs.map(formatFieldError);
    const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
    return statusError(422, 'Invalid', `${qualifiedString(kind)} "${name}" is invalid: ${summary}`, {
      ...detailsFor(kind, name),
      causes: fieldErrs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field })),
    });
  },
  tooManyRequests: (message: string, retryAfterSeconds: number): StatusError =>
    statusError(429, 'TooManyRequests', message, { retryAfterSeconds }),
  /** An error upstream does not classify: 500 with its bare message and no reason. */
  unknown: (message: string): StatusError => statusError(500, '', message),
  internal: (message: string): StatusError =>
    statusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] }),
  serviceUnavailable: (message: string, retryAfterSeconds?: number): StatusError =>
    statusError(503, 'ServiceUnavailable', message, retryAfterSeconds !== undefined ? { retryAfterSeconds } : undefined),
  timeout: (message: string, retryAfterSeconds: number): StatusError =>
    statusError(504, 'Timeout', `Timeout: ${message}`, { retryAfterSeconds }),
  /**
   * A read for a version newer than the server has: a 504 Timeout whose cause (reason
   * ResourceVersionTooLarge) is what clients such as client-go's reflector test for, as
   * upstream's storage.NewTooLargeResourceVersionError sets it.
   */
  tooLargeResourceVersion: (revision: number | string, current: number | string, retryAfterSeconds: number): StatusError =>
    statusError(504, 'Timeout', `Timeout: Too large resource version: ${revision}, current: ${current}`, {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds,
    }),
};

export const isStatusError = (e: unknown): e is StatusError => e instanceof StatusError;
export const isNotFound = (e: unknown): boolean => isStatusError(e) && e.reason === 'NotFound';
export const isConflict = (e: unknown): boolean => isStatusError(e) && e.reason === 'Conflict';
export const isAlreadyExists = (e: unknown): boolean => isStatusError(e) && e.reason === 'AlreadyExists';
