// raft/codec/codec-error.ts owns the one error type every decoder in raft/codec throws.
// Hostile or truncated input must surface as a CodecError (a stable code plus a reason),
// never as a RangeError from a typed array or an out-of-memory allocation.

export type CodecErrorCode =
  | 'CODEC_TRUNCATED'
  | 'CODEC_OVERFLOW'
  | 'CODEC_INVALID'
  | 'CODEC_TOO_LARGE'
  | 'CODEC_VERSION';

export class CodecError extends Error {
  readonly code: CodecErrorCode;
  constructor(code: CodecErrorCode, message: string) {
    super(message);
    this.name = 'CodecError';
    this.code = code;
  }
}

export function isCodecError(err: unknown): err is CodecError {
  return err instanceof CodecError;
}
