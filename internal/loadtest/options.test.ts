import { describe, expect, it } from 'vitest';
import { UsageError } from '../cluster-cli/args.js';
import { byteSize, DEFAULT_MIX, HELP, parseLoadArgs, parseMix, type LoadOptions } from './options.js';

const parse = (...argv: string[]) => parseLoadArgs(argv) as LoadOptions;
const usage = (argv: string[], message: RegExp) => {
  expect(() => parseLoadArgs(argv)).toThrow(UsageError);
  expect(() => parseLoadArgs(argv)).toThrow(message);
};

describe('parseLoadArgs', () => {
  it('has defaults for everything but the target', () => {
    const o = parse('--kubeconfig', 'a.kubeconfig');
    expect(o).toEqual({
      kubeconfigs: ['a.kubeconfig'],
      context: undefined,
      durationMs: 30_000,
      processes: 2,
      concurrency: 16,
      mix: { create: 40, update: 30, get: 10, list: 10, delete: 10 },
      watchers: 10,
      rate: 0,
      objectSize: 1024,
      namespace: 'clusterd-load',
      keep: false,
      listLimit: 100,
      timeoutMs: 30_000,
      output: 'text',
      progressIntervalMs: 2000,
    });
    expect(parseMix(DEFAULT_MIX)).toEqual({ mix: o.mix, watchers: o.watchers });
  });

  it('takes targets repeated, as comma lists, or from KUBECONFIG', () => {
    expect(parse('--kubeconfig', 'a,b', '--kubeconfig=c').kubeconfigs).toEqual(['a', 'b', 'c']);
    expect((parseLoadArgs([], { KUBECONFIG: '/x/admin.kubeconfig' }) as LoadOptions).kubeconfigs).toEqual(['/x/admin.kubeconfig']);
    expect((parseLoadArgs(['--kubeconfig', 'a'], { KUBECONFIG: '/x' }) as LoadOptions).kubeconfigs).toEqual(['a']);
    usage([], /no target: give --kubeconfig/);
    usage(['--kubeconfig', 'a,,b'], /empty file name/);
  });

  it('reads every flag', () => {
    const o = parse(
      '--kubeconfig=k',
      '--context=ctx',
      '--duration=1m30s',
      '--processes=4',
      '--concurrency=64',
      '--rate=250.5',
      '--mix=create=1,get=3,watch=0',
      '--object-size=4Ki',
      '--list-limit=0',
      '--timeout=2s',
      '--namespace=load-1',
      '--keep',
      '-o',
      'json',
      '--progress=0',
    );
    expect(o).toMatchObject({
      context: 'ctx',
      durationMs: 90_000,
      processes: 4,
      concurrency: 64,
      rate: 250.5,
      mix: { create: 1, update: 0, get: 3, list: 0, delete: 0 },
      watchers: 0,
      objectSize: 4096,
      listLimit: 0,
      timeoutMs: 2000,
      namespace: 'load-1',
      keep: true,
      output: 'json',
      progressIntervalMs: 0,
    });
    expect(parseLoadArgs(['--kubeconfig', 'k', '--help'])).toBe('help');
  });

  it('refuses what it cannot use, naming the flag', () => {
    usage(['--kubeconfig', 'k', '--frob'], /unknown flag: --frob/);
    usage(['--kubeconfig', 'k', 'extra'], /unexpected argument "extra"/);
    usage(['--kubeconfig', 'k', '--duration', '10'], /--duration: invalid duration "10"/);
    usage(['--kubeconfig', 'k', '--duration', '50ms'], /at least 100ms/);
    usage(['--kubeconfig', 'k', '--processes', '0'], /--processes: "0" must be a whole number from 1 to 64/);
    usage(['--kubeconfig', 'k', '--processes', '2.5'], /--processes/);
    usage(['--kubeconfig', 'k', '--processes', '8', '--concurrency', '4'], /--concurrency \(4\) must be at least --processes \(8\)/);
    usage(['--kubeconfig', 'k', '--rate', '-5'], /flag needs an argument|--rate/);
    usage(['--kubeconfig', 'k', '--rate', 'fast'], /--rate: "fast" must be a number/);
    usage(['--kubeconfig', 'k', '--output', 'yaml'], /--output must be text or json/);
    usage(['--kubeconfig', 'k', '--namespace', 'Bad_Name'], /not a valid namespace name/);
    usage(['--kubeconfig', 'k', '--keep=maybe'], /--keep takes no value/);
    usage(['--kubeconfig', 'k', '--timeout', '0'], /--timeout must be above 0/);
    usage(['--kubeconfig', 'k', '--duration', '1s', '--duration', '2s'], /--duration given twice/);
  });
});

describe('parseMix', () => {
  it('reads weights and the watcher count; omitted operations are 0', () => {
    expect(parseMix(' create = 2 , update=0.5,watch=3')).toEqual({ mix: { create: 2, update: 0.5, get: 0, list: 0, delete: 0 }, watchers: 3 });
  });
  it('refuses unknown, repeated, malformed and all-zero mixes', () => {
    expect(() => parseMix('create=1,patch=2')).toThrow(/unknown operation "patch"/);
    expect(() => parseMix('create=1,create=2')).toThrow(/create given twice/);
    expect(() => parseMix('create')).toThrow(/"create" is not op=number/);
    expect(() => parseMix('create=x')).toThrow(/create=x is not a weight/);
    expect(() => parseMix('create=-1')).toThrow(/not a weight/);
    expect(() => parseMix('watch=1.5,create=1')).toThrow(/mix watch/);
    expect(() => parseMix('create=0,watch=5')).toThrow(/at least one of create, update, get, list, delete/);
  });
});

describe('byteSize', () => {
  it('reads bytes with decimal and binary suffixes, up to a ConfigMap', () => {
    expect([byteSize('0'), byteSize('512'), byteSize('4k'), byteSize('4Ki'), byteSize('1M')]).toEqual([0, 512, 4000, 4096, 1_000_000]);
    expect(() => byteSize('1Mi')).toThrow(/above 1000000 bytes/);
    expect(() => byteSize('4 kb')).toThrow(/not a size in bytes/);
  });
});

describe('HELP', () => {
  it('explains every flag the parser knows', () => {
    for (const flag of ['kubeconfig', 'context', 'duration', 'processes', 'concurrency', 'rate', 'mix', 'object-size', 'list-limit', 'timeout', 'namespace', 'keep', 'output', 'progress', 'help']) {
      expect(HELP).toMatch(new RegExp(`^ +(-\\w, )?--${flag}\\b`, 'm'));
    }
  });
});
