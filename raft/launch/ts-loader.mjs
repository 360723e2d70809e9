// raft/launch/ts-loader.mjs owns running this repository's TypeScript sources directly in a
// child Node process (Node 20 cannot strip types): `node --import <this file> child.ts`.
// It maps NodeNext-style './x.js' specifiers to './x.ts' when only the .ts exists and
// transpiles .ts files with the project's own TypeScript (no type checking: tsc does that).
// Used by multi-process tests and the benchmark when they run from source; compiled runs
// (dist/) spawn plain .js and never load this.
import { register } from 'node:module';

register('./ts-loader-hooks.mjs', import.meta.url);
