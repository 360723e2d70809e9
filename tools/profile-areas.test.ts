import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { areaOf, areaShares, parseProfileAreasArgs, sourceMapResolver, type CpuProfile } from './profile-areas.js';

describe('areaOf', () => {
  it.each([
    [{ functionName: '(garbage collector)', url: '' }, undefined, 'gc'],
    [{ functionName: '(program)', url: '' }, undefined, 'native (program)'],
    [{ functionName: 'writev', url: '' }, undefined, 'native: writev'],
    [{ functionName: 'done', url: 'node:_tls_wrap' }, undefined, 'node: tls'],
    [{ functionName: 'x', url: 'node:internal/http2/core' }, undefined, 'node: http2'],
    [{ functionName: 'x', url: 'node:_http_server' }, undefined, 'node: http/1.1'],
    [{ functionName: 'x', url: 'node:internal/streams/readable' }, undefined, 'node: net and streams'],
    [{ functionName: 'x', url: 'node:internal/buffer' }, undefined, 'node: buffer'],
    [{ functionName: 'x', url: 'node:events' }, undefined, 'node: events'],
    [{ functionName: 'x', url: 'node:internal/process/task_queues' }, undefined, 'node: timers, ticks and async hooks'],
    [{ functionName: 'x', url: 'node:zlib' }, undefined, 'node: other'],
    [{ functionName: '_write', url: 'file:///w/node_modules/classic-level/chained-batch.js' }, undefined, 'npm: classic-level'],
    [{ functionName: 'x', url: 'file:///w/node_modules/@hono/node-server/dist/index.js' }, undefined, 'npm: @hono/node-server'],
    [{ functionName: 'send', url: 'file:///w/dist/cmd/clusterd/chunk-replica.js' }, 'raft/transport/http2-transport.ts', 'raft/transport'],
    [{ functionName: 'apply', url: 'file:///w/dist/cmd/clusterd/chunk-server.js' }, 'internal/store/applier.ts', 'internal/store'],
    [{ functionName: 'main', url: 'file:///w/dist/cmd/clusterd/main.js' }, 'dist/cmd/clusterd/main.js', 'other: main.js'],
  ])('%o (source %s) is %s', (frame, source, area) => {
    expect(areaOf(frame, source)).toBe(area);
  });
});

describe('areaShares', () => {
  const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0, columnNumber: 0 });
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', '') },
      { id: 2, callFrame: frame('(idle)', '') },
      { id: 3, callFrame: frame('(garbage collector)', '') },
      { id: 4, callFrame: frame('step', '/w/dist/raft/core/raft.js') },
      { id: 5, callFrame: frame('done', 'node:_tls_wrap') },
    ],
    // Microseconds: 5 ms idle, 1 ms GC, 3 ms raft, 1 ms TLS (over two samples).
    samples: [2, 3, 4, 5, 4, 5],
    timeDeltas: [5000, 1000, 2000, 500, 1000, 500],
  };

  it('sums self time by area over busy time, busiest first, idle left out', () => {
    const { busyMs, areas } = areaShares(profile, (url) => (url.includes('raft/core') ? 'raft/core/raft.ts' : undefined));
    expect(busyMs).toBe(5);
    expect(areas).toEqual([
      { area: 'raft/core', ms: 3, share: 0.6 },
      { area: 'gc', ms: 1, share: 0.2 },
      { area: 'node: tls', ms: 1, share: 0.2 },
    ]);
  });

  it('maps a bundled frame back to its source through the file\'s source map', () => {
    const dir = mkdtempSync(join(tmpdir(), 'profile-areas-'));
    try {
      const bundle = join(dir, 'dist', 'bundle.js');
      mkdirSync(join(dir, 'dist'));
      writeFileSync(bundle, 'a();\nb();\n');
      // Line 0 comes from raft/node/raft-node.ts, line 1 from internal/store/applier.ts.
      writeFileSync(`${bundle}.map`, JSON.stringify({ version: 3, file: 'bundle.js', sources: ['../raft/node/raft-node.ts', '../internal/store/applier.ts'], names: [], mappings: 'AAAA;ACAA' }));
      const sourceOf = sourceMapResolver(dir);
      const url = pathToFileURL(bundle).href;
      expect(sourceOf(url, 0, 0)).toBe(join('raft', 'node', 'raft-node.ts'));
      expect(sourceOf(url, 1, 0)).toBe(join('internal', 'store', 'applier.ts'));
      expect(sourceOf(pathToFileURL(join(dir, 'dist', 'no-map.js')).href, 0, 0)).toBe(join('dist', 'no-map.js'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('parseProfileAreasArgs', () => {
  it.each([
    [['a.cpuprofile'], { per: undefined, files: ['a.cpuprofile'] }],
    [['--per', '250', 'a.cpuprofile', 'b.cpuprofile'], { per: 250, files: ['a.cpuprofile', 'b.cpuprofile'] }],
    [['--help'], 'help'],
    [['a.cpuprofile', '-h'], 'help'],
  ])('%j', (argv, want) => {
    expect(parseProfileAreasArgs(argv)).toEqual(want);
  });

  it.each([
    [[], /no profile named/],
    [['--per', '0', 'a'], /--per needs a positive number/],
    [['--per'], /--per needs a positive number/],
    [['--bogus', 'a'], /unknown flag --bogus/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseProfileAreasArgs(argv)).toThrow(message);
  });
});
