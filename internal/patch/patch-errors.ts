// internal/patch/patch-errors owns the Status errors the patch engines raise, with the codes
// upstream's patch handler answers: 400 for a malformed patch document or directive, 422 for a
// patch that is well formed but cannot be applied to this object, 413 for too many operations.
// Imports: apierrors.

import { errors, StatusError, type StatusCause } from '../apierrors/status.js';

/** Upstream's generic 422 text (it drops the library's detail; we keep it as a cause). */
export const PATCH_REJECTED_MESSAGE = 'the server rejected our request due to an error in our request';

/** 422 Invalid: the patch is well formed but does not apply (failed `test`, missing path, …). */
export function patchNotApplicable(detail: string): StatusError {
  const causes: StatusCause[] = detail ? [{ message: detail }] : [];
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: PATCH_REJECTED_MESSAGE,
    reason: 'Invalid',
    ...(causes.length > 0 ? { details: { causes } } : {}),
    code: 422,
  });
}

/** 422 Invalid with the library's own message (strategic merge patch's unprocessable cases). */
export function patchUnprocessable(message: string): StatusError {
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: 'Invalid',
    code: 422,
  });
}

/** 400 Bad Request: the patch document itself is malformed. */
export const patchMalformed = (message: string): StatusError => errors.badRequest(message);

/** 413: more operations than the server accepts in one JSON patch. */
export function tooManyOperations(max: number, got: number): StatusError {
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `The allowed maximum operations in a JSON patch is ${max}, got ${got}`,
    reason: 'RequestEntityTooLarge',
    code: 413,
  });
}
