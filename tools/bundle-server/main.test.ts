// Table test of the bundle's dynamic-import check: the bundled server runs from V8 code caches,
// where Node 20 cannot resolve an import() (see dynamicImportsIn), so the build refuses one.
import { describe, expect, it } from 'vitest';
import { dynamicImportsIn } from './main.js';

describe('dynamicImportsIn', () => {
  const rows: [string, string, number[]][] = [
    ['a dynamic import of a builtin', 'const a = 1;\nconst https = await import("node:https");', [2]],
    ['with a space before the parenthesis', 'x = import ("./chunk.cjs")', [1]],
    ['at the start of a line', 'import(spec).then(f)', [1]],
    ['several, one per line', 'import("a")\nok()\nimport("b")', [1, 3]],
    ['a static require', 'const h = require("node:https");', []],
    ['a method named import', 'loader.import("x"); obj.$import("y")', []],
    ['an identifier ending in import', 'reimport("x"); my_import("y")', []],
    ['import.meta', 'const u = import.meta.url;', []],
    ['a JSDoc line', ' * @param {import("./x").T} t', []],
    ['a line comment', '// await import("node:https")', []],
    ['a block comment start', '/* import("x") */', []],
    ['in a trailing comment (reported: the safe side)', 'f(); // import("x")', [1]],
  ];
  it.each(rows)('%s', (_name, code, lines) => {
    expect(dynamicImportsIn(code)).toEqual(lines);
  });
});
