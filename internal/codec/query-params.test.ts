import { describe, expect, it } from 'vitest';
import { queryBool } from './query-params.js';

describe('queryBool (upstream parameter codec semantics)', () => {
  it.each([
    [null, undefined],
    [undefined, undefined],
    ['', true],
    ['true', true],
    ['True', true],
    ['TRUE', true],
    ['1', true],
    ['yes', true],
    ['maybe', true],
    ['false', false],
    ['False', false],
    ['FALSE', false],
    ['0', false],
    ['00', true],
    [' false', true],
  ] as const)('%j reads as %j', (value, expected) => {
    expect(queryBool(value)).toBe(expected);
  });
});
