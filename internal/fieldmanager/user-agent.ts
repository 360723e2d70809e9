// internal/fieldmanager/user-agent owns the manager name of a write that does not say
// `fieldManager`: upstream takes the User-Agent's program name (up to the first `/`), drops
// unprintable characters and keeps at most 128 bytes.
// Imports: nothing from the project.

/** Upstream's limit on field manager names, in UTF-8 bytes. */
export const FIELD_MANAGER_MAX_LENGTH = 128;

const PRINTABLE = /[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u;

/** `kubectl/v1.30.0 (linux/amd64) kubernetes/abc` → `kubectl`. */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const program = (userAgent ?? '').split('/')[0] ?? '';
  let out = '';
  let bytes = 0;
  for (const ch of program) {
    if (!PRINTABLE.test(ch)) continue;
    const size = Buffer.byteLength(ch, 'utf8');
    if (bytes + size > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += size;
  }
  return out;
}

/** The `fieldManager` query parameter when given, else the User-Agent's program name. */
export function managerOrUserAgent(fieldManager: string | undefined, userAgent: string | undefined): string {
  return fieldManager ? fieldManager : managerFromUserAgent(userAgent);
}
