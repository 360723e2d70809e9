// internal/admission/version-conversion owns converting a request's object to (and back from)
// the version an admission webhook or policy matched under `matchPolicy: Equivalent`: as the
// registry converts between served versions (synchronously), except for a custom resource whose
// definition converts through its conversion webhook, which is called as upstream's admission
// calls it (the object convertor of a webhook-converted resource is the webhook).
// Imports: admission (types), registry/conversion, registry/webhook-conversion (type), schema (type).

import type { JsonObject } from './admission.js';
import { convertObject } from '../registry/conversion.js';
import type { WebhookConverter } from '../registry/webhook-conversion.js';
import type { ResourceInfo } from '../schema/catalog.js';

/** `obj`, in `from`'s shape, in `to`'s shape: a new object (or `obj` itself when already there). */
export type AdmissionConverter = (obj: JsonObject, from: ResourceInfo, to: ResourceInfo) => JsonObject | Promise<JsonObject>;

/**
 * The converter admission uses. Without `webhooks` (unit tests of the plugins) a
 * webhook-converted resource is converted as with the `None` strategy.
 */
export function admissionConverter(webhooks?: Pick<WebhookConverter, 'convert'>): AdmissionConverter {
  return (obj, from, to) => {
    const webhook = to.custom?.webhookConversion ?? from.custom?.webhookConversion;
    if (webhooks && webhook && obj.apiVersion !== to.apiVersion) return webhooks.convert([obj], to.apiVersion, webhook, true).then((out) => out[0]!);
    return convertObject(obj, from, to);
  };
}
