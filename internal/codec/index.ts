// internal/codec is the wire-format layer: it turns request bodies into the JSON form of objects
// and the JSON form into response bodies, for JSON, YAML, protobuf (built-in kinds only) and CBOR
// (gate CBORServingAndStorage, checked by the caller). It decides nothing about negotiation,
// status codes other than 400 for undecodable input, or which format a request gets: that is the
// HTTP layer's. Imports: apierrors, naming, schema, storedobject (compact JSON scanning), js-yaml.

export {
  CBOR_FEATURE_GATE,
  mediaTypes,
  parseMediaType,
  parseMediaTypeList,
  patchMediaTypes,
  type CodecName,
  type MediaTypeInfo,
  type ParsedMediaType,
  type PatchMediaTypeInfo,
} from './media-types.js';
export { decodeJson, encodeJson, indentJson, JSON_MAX_DEPTH, type DecodeResult, type JsonDecodeOptions, type JsonEncodeOptions } from './json/json-codec.js';
export {
  decodeYaml,
  encodeYaml,
  YAML_MAX_DEPTH,
  type YamlDecodeOptions,
  type YamlDecodeResult,
  type YamlEncodeOptions,
} from './yaml/yaml-codec.js';
export {
  defaultProtoSchema,
  frameWatchEvent,
  ProtobufCodec,
  WatchFrameDecoder,
  type Envelope,
  type ProtobufCodecOptions,
  type WatchEventValue,
} from './protobuf/protobuf-codec.js';
export {
  decodeCbor,
  decodeCborSeq,
  EncodedCbor,
  encodeCbor,
  encodeCborParts,
  encodeCborSeq,
  encodeCborWatchEvent,
  looksLikeCbor,
  SELF_DESCRIBED_CBOR,
  type CborDecodeOptions,
  type CborDecodeResult,
  type CborEncodeOptions,
} from './cbor/cbor-codec.js';
