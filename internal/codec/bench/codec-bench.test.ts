import { expect, it } from 'vitest';
import { formatCodecBenchmarks, runCodecBenchmarks } from './codec-bench.js';

it('runs every codec over a pod and a list (smoke run; figures are not asserted)', () => {
  const rows = runCodecBenchmarks({ quick: true });
  expect(rows.map((r) => r.codec)).toEqual(['json', 'protobuf', 'cbor', 'yaml', 'protobuf (cached items)']);
  for (const r of rows) expect(r.listBytes).toBeGreaterThan(r.podBytes);
  // Protobuf is the compact one; the spliced list is byte-identical in size to the encoded one.
  const byName = Object.fromEntries(rows.map((r) => [r.codec, r]));
  expect(byName.protobuf!.podBytes).toBeLessThan(byName.json!.podBytes);
  expect(byName['protobuf (cached items)']!.listBytes).toBe(byName.protobuf!.listBytes);
  expect(formatCodecBenchmarks(rows)).toContain('protobuf');
}, 60_000);
