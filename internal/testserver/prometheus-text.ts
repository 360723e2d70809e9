// internal/testserver/prometheus-text owns reading a /metrics answer (Prometheus text format
// 0.0.4) in tests: each family's TYPE and HELP, and every sample with its labels. Test-only.
// Imports: nothing from the project.

export interface Sample {
  /** The sample's own name (a histogram's end in _bucket, _sum or _count). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** Family name → counter, gauge, histogram, summary or untyped. */
  types: Map<string, string>;
  help: Map<string, string>;
  samples: Sample[];
}

const unescape = (v: string): string => v.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let m = /^# (TYPE|HELP) (\S+) (.*)$/.exec(line);
    if (m) {
      (m[1] === 'TYPE' ? types : help).set(m[2]!, m[3]!);
      continue;
    }
    if (line.startsWith('#')) continue;
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) throw new Error(`unreadable /metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = unescape(l[2]!);
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { types, help, samples };
}

/** The family a sample belongs to: a histogram's or summary's series map to their base name. */
export function familyOf(e: Exposition, sampleName: string): string | undefined {
  if (e.types.has(sampleName)) return sampleName;
  const base = sampleName.replace(/_(bucket|sum|count)$/, '');
  const t = e.types.get(base);
  return t === 'histogram' || t === 'summary' ? base : undefined;
}

/** The value of the one sample with exactly these labels (0 when there is none yet). */
export function valueOf(e: Exposition, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels);
  const found = e.samples.filter((s) => s.name === name && Object.keys(s.labels).length === want.length && want.every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}
