// internal/lazy/re2js owns the one lazily required copy of re2js (RE2 syntax for CRD schema
// patterns and CEL's matches()): about 250 KB of code that a start without such a pattern never
// runs. Imports: lazy/lazy-require.

import type * as Re2js from 're2js';
import { lazyRequire } from './lazy-require.js';

export const re2js = lazyRequire<typeof Re2js>('re2js');
