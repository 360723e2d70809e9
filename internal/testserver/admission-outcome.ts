// internal/testserver/admission-outcome owns running one admission plugin over a request as the
// chain runs it (mutating phase, then validating) for plugin tests: the object as it comes out,
// or the refusal as `<code> <message>`. Test-only. Imports: admission, apierrors.

import type { AdmissionPlugin, AdmissionRequest, JsonObject } from '../admission/admission.js';
import { StatusError } from '../apierrors/status.js';

export async function admissionOutcome(plugin: AdmissionPlugin, req: AdmissionRequest): Promise<JsonObject | string> {
  try {
    await plugin.admit?.(req);
    await plugin.validate?.(req);
    return req.object ?? {};
  } catch (e) {
    if (e instanceof StatusError) return `${e.code} ${e.status.message}`;
    throw e;
  }
}
