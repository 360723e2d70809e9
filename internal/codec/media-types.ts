// internal/codec/media-types owns the table of wire formats the server can read and write (JSON,
// YAML, protobuf under the configured naming, CBOR behind its gate) and a small RFC 9110 media
// type parser. Accept negotiation itself (q-values, wildcards, 406/415) belongs to the HTTP layer;
// it reads this table and uses the parser. Imports: naming.

import type { Naming } from '../naming/naming.js';

export type CodecName = 'json' | 'yaml' | 'protobuf' | 'cbor';

export interface MediaTypeInfo {
  /** `type/subtype` without parameters, lower case (`application/json`). */
  readonly mediaType: string;
  readonly type: string;
  readonly subtype: string;
  readonly codec: CodecName;
  /** True for text formats (JSON, YAML): watch frames are newline/document separated. */
  readonly encodesAsText: boolean;
  /**
   * The media type a watch response carries (`application/json;stream=watch`,
   * `application/vnd.<naming>.protobuf;stream=watch`, `application/cbor-seq`), or undefined when
   * the format has no stream form (YAML, as upstream).
   */
  readonly streamMediaType: string | undefined;
  /** Feature gate that must be on for this entry to be offered (CBOR), or undefined. */
  readonly featureGate: string | undefined;
  /**
   * False when objects without a generated message (custom resources, aggregated kinds, Table)
   * cannot use this format: the HTTP layer answers 406/415 for them.
   */
  readonly supportsUntypedObjects: boolean;
}

/** A request body type for PATCH, mapped to the codec that reads its body. */
export interface PatchMediaTypeInfo {
  readonly mediaType: string;
  readonly patchType: 'json-patch' | 'merge-patch' | 'strategic-merge-patch' | 'apply';
  readonly codec: CodecName;
  readonly featureGate: string | undefined;
}

export const CBOR_FEATURE_GATE = 'CBORServingAndStorage';

/**
 * The formats the server can decode and encode, in the server's order of preference (JSON first,
 * as upstream lists it). Entries with a featureGate are listed regardless of the gate's state; the
 * caller filters.
 */
export function mediaTypes(naming: Naming): readonly MediaTypeInfo[] {
  const protobufSubtype = naming.protobufMediaType.slice('application/'.length);
  return [
    {
      mediaType: 'application/json',
      type: 'application',
      subtype: 'json',
      codec: 'json',
      encodesAsText: true,
      streamMediaType: 'application/json;stream=watch',
      featureGate: undefined,
      supportsUntypedObjects: true,
    },
    {
      mediaType: 'application/yaml',
      type: 'application',
      subtype: 'yaml',
      codec: 'yaml',
      encodesAsText: true,
      streamMediaType: undefined,
      featureGate: undefined,
      supportsUntypedObjects: true,
    },
    {
      mediaType: naming.protobufMediaType,
      type: 'application',
      subtype: protobufSubtype,
      codec: 'protobuf',
      encodesAsText: false,
      streamMediaType: `${naming.protobufMediaType};stream=watch`,
      featureGate: undefined,
      supportsUntypedObjects: false,
    },
    {
      mediaType: 'application/cbor',
      type: 'application',
      subtype: 'cbor',
      codec: 'cbor',
      encodesAsText: false,
      streamMediaType: 'application/cbor-seq',
      featureGate: CBOR_FEATURE_GATE,
      supportsUntypedObjects: true,
    },
  ];
}

/** PATCH body types and the codec that reads each (apply+cbor only with the CBOR gate). */
export function patchMediaTypes(): readonly PatchMediaTypeInfo[] {
  return [
    { mediaType: 'application/json-patch+json', patchType: 'json-patch', codec: 'json', featureGate: undefined },
    { mediaType: 'application/merge-patch+json', patchType: 'merge-patch', codec: 'json', featureGate: undefined },
    {
      mediaType: 'application/strategic-merge-patch+json',
      patchType: 'strategic-merge-patch',
      codec: 'json',
      featureGate: undefined,
    },
    { mediaType: 'application/apply-patch+yaml', patchType: 'apply', codec: 'yaml', featureGate: undefined },
    { mediaType: 'application/apply-patch+cbor', patchType: 'apply', codec: 'cbor', featureGate: CBOR_FEATURE_GATE },
  ];
}

export interface ParsedMediaType {
  /** Lower-cased type, `*` allowed. */
  readonly type: string;
  /** Lower-cased subtype, `*` allowed. */
  readonly subtype: string;
  /** `type/subtype`. */
  readonly mediaType: string;
  /** Parameter names lower-cased; values unquoted, case kept (`as=Table`, `g=meta.k8s.io`). */
  readonly params: Readonly<Record<string, string>>;
}

// RFC 9110 token characters.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Parses one media type (`application/json;as=Table;v=v1;g=meta.k8s.io`, quoted parameter values
 * allowed). Returns undefined for anything malformed rather than throwing: a bad Accept entry is
 * skipped by negotiation, a bad Content-Type becomes a 415, and only the caller knows which.
 */
export function parseMediaType(header: string): ParsedMediaType | undefined {
  const parts = splitOutsideQuotes(header, ';');
  const full = parts[0]!.trim();
  const slash = full.indexOf('/');
  if (slash <= 0 || slash === full.length - 1) return undefined;
  const type = full.slice(0, slash).trim().toLowerCase();
  const subtype = full.slice(slash + 1).trim().toLowerCase();
  if (!TOKEN.test(type) || !TOKEN.test(subtype)) return undefined;
  if (type === '*' && subtype !== '*') return undefined;
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i]!.trim();
    if (p === '') continue;
    const eq = p.indexOf('=');
    if (eq <= 0) return undefined;
    const name = p.slice(0, eq).trim().toLowerCase();
    let value = p.slice(eq + 1).trim();
    if (!TOKEN.test(name)) return undefined;
    if (value.startsWith('"')) {
      if (value.length < 2 || !value.endsWith('"')) return undefined;
      value = value.slice(1, -1).replace(/\\(.)/g, '$1');
    } else if (!TOKEN.test(value)) {
      return undefined;
    }
    params[name] = value;
  }
  return { type, subtype, mediaType: `${type}/${subtype}`, params };
}

/**
 * Splits an Accept header into its comma-separated entries (commas inside quoted parameter values
 * do not split) and parses each; malformed entries are dropped, as upstream ignores them.
 */
export function parseMediaTypeList(header: string): ParsedMediaType[] {
  const out: ParsedMediaType[] = [];
  for (const entry of splitOutsideQuotes(header, ',')) {
    if (entry.trim() === '') continue;
    const parsed = parseMediaType(entry);
    if (parsed) out.push(parsed);
  }
  return out;
}

function splitOutsideQuotes(s: string, sep: string): string[] {
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') {
      quoted = true;
    } else if (c === sep) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}
