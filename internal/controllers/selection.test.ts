import { describe, it, expect } from 'vitest';
import { controllerEnabled, type ControllerName } from './selection.js';

describe('--controllers selection (upstream IsControllerEnabled)', () => {
  it.each<[string[], ControllerName, boolean]>([
    [['*'], 'serviceaccount-controller', true],
    [['*'], 'bootstrap-signer-controller', false],
    [['*'], 'token-cleaner-controller', false],
    [['*', 'bootstrapsigner', 'tokencleaner'], 'bootstrap-signer-controller', true],
    [['*', 'token-cleaner-controller'], 'token-cleaner-controller', true],
    [['*', '-serviceaccount'], 'serviceaccount-controller', false],
    [['-serviceaccount', 'serviceaccount'], 'serviceaccount-controller', false],
    [['tokencleaner'], 'serviceaccount-controller', false],
    [['tokencleaner'], 'token-cleaner-controller', true],
    [['*'], 'garbage-collector-controller', true],
    [['*', '-garbagecollector'], 'garbage-collector-controller', false],
  ])('%j → %s %s', (entries, name, want) => {
    expect(controllerEnabled(name, entries)).toBe(want);
  });
});
