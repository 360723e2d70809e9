// internal/codecache/entry is the body of the built server entry point (dist/cmd/clusterd/main.js,
// written by tools/bundle-server): it runs the bundled server (main.cjs beside it) through the
// code-caching loader. Imports: codecache/bundle-loader.

import { fileURLToPath } from 'node:url';
import { runBundle } from './bundle-loader.js';

// Bundled into dist/cmd/clusterd/main.js, the same depth under dist/ as this module.
runBundle(fileURLToPath(new URL('../../cmd/clusterd/main.cjs', import.meta.url)));
