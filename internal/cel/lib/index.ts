// internal/cel/lib owns the Kubernetes CEL libraries registered on an engine environment, as
// upstream 1.32's base environment offers them: lists, regex, url, quantity, ip and cidr, format,
// sets, the strings extension's functions the engine lacks, and standard conversions it lacks. Imports: the library modules.

import type { Environment } from './common.js';
import { registerFormat } from './format.js';
import { registerLists } from './lists.js';
import { registerNet } from './net.js';
import { registerQuantity } from './quantity.js';
import { registerRegex } from './regex.js';
import { registerSets } from './sets.js';
import { registerStdGaps } from './std-gaps.js';
import { registerStrings } from './strings.js';
import { registerURL } from './url.js';

export { CelLibraryError } from './common.js';

export function registerKubernetesLibraries(env: Environment): Environment {
  registerLists(env);
  registerRegex(env);
  registerStrings(env);
  registerURL(env);
  registerQuantity(env);
  registerNet(env);
  registerFormat(env);
  registerSets(env);
  registerStdGaps(env);
  return env;
}
