// cmd/clusterd-pki generates a data directory's certificates and keys (what ensurePki would),
// in its own short-lived process so the API server never loads the certificate library.
// Usage: clusterd-pki --data-dir=DIR [--bind-address=IP]. Exit 0 on success, 2 on bad flags.

import { generatePki } from '../../internal/pki/pki.js';

const args = new Map(
  process.argv.slice(2).map((a) => {
    const m = /^--([a-z-]+)=(.*)$/.exec(a);
    if (!m) {
      process.stderr.write(`clusterd-pki: unexpected argument ${a} (use --data-dir=DIR --bind-address=IP)\n`);
      process.exit(2);
    }
    return [m[1]!, m[2]!] as const;
  }),
);
const dataDir = args.get('data-dir');
if (!dataDir) {
  process.stderr.write('clusterd-pki: --data-dir is required\n');
  process.exit(2);
}
generatePki(dataDir, args.get('bind-address') ?? '0.0.0.0').catch((e: unknown) => {
  process.stderr.write(`clusterd-pki: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
