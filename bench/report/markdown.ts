// bench/report/markdown owns the Markdown table printed at the end of a run: one line per
// figure with its baseline, their ratio, the target and whether it holds, then the notes.
// Imports: report/rows.

import type { Row } from './rows.js';

export function formatNumber(v: number | null | undefined, unit = ''): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return 'n/a';
  const abs = Math.abs(v);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  const text = v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
  return unit ? `${text} ${unit}` : text;
}

const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

export function markdownTable(rows: Row[]): string {
  const lines = ['| scenario | figure | clusterd | baseline | ratio | target | holds? |', '|---|---|---:|---:|---:|---|---|'];
  for (const r of rows) {
    const baseline = r.baseline ? `${formatNumber(r.baseline.value, r.unit)} (${r.baseline.name})` : '';
    const ratio = r.ratio === undefined || r.ratio === null ? (r.baseline ? 'n/a' : '') : `${formatNumber(r.ratio)}×`;
    const holds = r.holds === null ? (r.value === null ? 'n/a' : 'reported') : r.holds ? 'yes' : '**no**';
    const value = r.value === null ? (r.note?.startsWith('n/a') ? r.note : 'n/a') : formatNumber(r.value, r.unit);
    lines.push(`| ${cell(r.scenario)} | ${cell(r.figure)} | ${cell(value)} | ${cell(baseline)} | ${ratio} | ${cell(r.target)} | ${holds} |`);
  }
  return lines.join('\n');
}

/** Notes per row (those not already shown as n/a in the value column), numbered by row. */
export function markdownNotes(rows: Row[]): string {
  const notes = rows.filter((r) => r.note && r.value !== null).map((r) => `- ${r.scenario} — ${r.figure}: ${r.note}`);
  return notes.join('\n');
}
