// internal/http/negotiation owns reading `Accept` (media ranges, parameters, q-values, `*/*`
// and `type/*`) and `Content-Type`, and choosing among what the server can produce. The first
// acceptable type in the client's preference order wins; q=0 excludes; nothing acceptable is
// a 406, an unsupported request body type a 415. Imports: apierrors.

import { errors } from '../apierrors/status.js';

export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
  /** Position in the header, to keep the client's order among equal q-values. */
  order: number;
}

/** Parses one media type (`application/json;as=Table;v=v1;g=meta.k8s.io`). */
export function parseMediaType(text: string): { type: string; subtype: string; params: Record<string, string> } | undefined {
  const [full, ...rawParams] = text.split(';');
  const mt = full!.trim().toLowerCase();
  const slash = mt.indexOf('/');
  if (slash <= 0 || slash === mt.length - 1) return undefined;
  const params: Record<string, string> = {};
  for (const p of rawParams) {
    const eq = p.indexOf('=');
    if (eq <= 0) continue;
    params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  return { type: mt.slice(0, slash), subtype: mt.slice(slash + 1), params };
}

/** Splits an Accept header into ranges sorted by preference (q desc, then header order). */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header || !header.trim()) return [{ type: '*', subtype: '*', params: {}, q: 1, order: 0 }];
  const ranges: MediaRange[] = [];
  header.split(',').forEach((part, order) => {
    const parsed = parseMediaType(part);
    if (!parsed) return;
    let q = 1;
    if (parsed.params.q !== undefined) {
      const n = Number(parsed.params.q);
      q = Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 1;
      delete parsed.params.q;
    }
    // Members listed: a spread followed by members its source lacks takes a slow path in V8
    // (about a microsecond each), and this runs for every range of every request's Accept.
    ranges.push({ type: parsed.type, subtype: parsed.subtype, params: parsed.params, q, order });
  });
  // Among equal q-values a specific type beats `type/*`, which beats `*/*` (RFC 9110 §12.5.1;
  // upstream's goautoneg orders them so), then header order.
  const specificity = (r: MediaRange): number => (r.type === '*' ? 0 : r.subtype === '*' ? 1 : 2);
  return ranges.filter((r) => r.q > 0).sort((a, b) => b.q - a.q || specificity(b) - specificity(a) || a.order - b.order);
}

/** One thing the server can answer with. `matches` may look at the range's parameters. */
export interface Offer<T> {
  mediaType: string;
  value: T;
  /** Extra acceptance test (for example `as=Table` parameters); default: no parameters other than charset/pretty/stream. */
  accepts?(range: MediaRange): boolean;
}

/**
 * Whether a range asks for the plain representation. As upstream's acceptMediaTypeOptions:
 * `as`, `g` or `v` ask for a conversion (Table, metadata), `sv` for a server version no endpoint
 * allows, and `stream` for a stream other than a watch; any other parameter (charset, pretty,
 * unknown ones) is ignored rather than making the type unacceptable.
 */
const plainParams = (range: MediaRange): boolean => {
  const p = range.params;
  if (p.as !== undefined || p.g !== undefined || p.v !== undefined) return false;
  if (p.sv) return false;
  return !p.stream || p.stream === 'watch';
};

/**
 * Picks the offer for the most preferred acceptable range. Wildcards match the first offer of
 * the type (offers are listed in server preference order). Throws 406 when none fits.
 */
export function negotiate<T>(accept: string | undefined, offers: readonly Offer<T>[]): { offer: Offer<T>; range: MediaRange } {
  for (const range of parseAccept(accept)) {
    for (const offer of offers) {
      const [type, subtype] = offer.mediaType.split('/') as [string, string];
      const typeOk = range.type === '*' || range.type === type;
      const subtypeOk = range.subtype === '*' || range.subtype === subtype;
      if (!typeOk || !subtypeOk) continue;
      const paramsOk = offer.accepts ? offer.accepts(range) : plainParams(range);
      if (paramsOk) return { offer, range };
    }
  }
  throw errors.notAcceptable(offers.filter((o) => !o.accepts).map((o) => o.mediaType));
}

/**
 * The media type of a request body (`application/json` when absent, as upstream assumes). One
 * that does not parse is a 415 listing `supported`, as upstream's NegotiateInputSerializer.
 */
export function requestMediaType(contentType: string | undefined, supported: readonly string[] = []): { mediaType: string; params: Record<string, string> } {
  if (!contentType || !contentType.trim()) return { mediaType: 'application/json', params: {} };
  const parsed = parseMediaType(contentType);
  if (!parsed) throw errors.unsupportedMediaType(supported);
  return { mediaType: `${parsed.type}/${parsed.subtype}`, params: parsed.params };
}
