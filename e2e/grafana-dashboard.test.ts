// deploy/grafana/clusterd-dashboard.json against a real three-replica cluster: every metric
// named in any panel's expression (and in the replica variable's query) is on every replica's
// /metrics — a histogram's _bucket/_sum/_count through its family — so the dashboard cannot
// show a metric that does not exist. Also its shape: the datasource is the ${DS_PROMETHEUS}
// input everywhere, and the panels operators expect are there.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { familyOf, parseExposition, type Exposition } from '../internal/testserver/prometheus-text.js';
import { ClusterProcess } from './support/cluster-process.js';
import { PROJECT_ROOT } from './support/server-process.js';

interface Target {
  expr?: string;
  datasource?: { uid?: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
}
interface Dashboard {
  __inputs: Array<{ name: string; type: string; pluginId: string }>;
  panels: Panel[];
  templating: { list: Array<{ name: string; datasource?: { uid?: string }; query: { query: string } | string }> };
}

const dashboard = JSON.parse(readFileSync(join(PROJECT_ROOT, 'deploy', 'grafana', 'clusterd-dashboard.json'), 'utf8')) as Dashboard;

const PROMQL_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** The metric names a PromQL expression reads: identifiers that are not functions, keywords, labels or variables. */
function metricNames(expr: string): string[] {
  const s = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names: string[] = [];
  for (const m of s.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const after = s.slice(m.index! + m[0].length).trimStart();
    if (after.startsWith('(') || PROMQL_KEYWORDS.has(m[0].toLowerCase())) continue;
    names.push(m[0]);
  }
  return names;
}

/** Every (where, metric) the dashboard reads. */
function dashboardMetrics(): Array<{ where: string; metric: string }> {
  const out: Array<{ where: string; metric: string }> = [];
  for (const p of dashboard.panels) {
    for (const t of p.targets ?? []) for (const metric of metricNames(t.expr ?? '')) out.push({ where: `panel "${p.title}"`, metric });
  }
  for (const v of dashboard.templating.list) {
    const q = typeof v.query === 'string' ? v.query : v.query.query;
    const m = /^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(q);
    if (m) out.push({ where: `variable $${v.name}`, metric: m[1]! });
  }
  return out;
}

describe('PromQL metric names', () => {
  it.each([
    ['sum by (verb) (rate(apiserver_request_total{instance=~"$instance"}[$__rate_interval]))', ['apiserver_request_total']],
    ['histogram_quantile(0.99, sum by (le) (rate(a_bucket{verb!~"WATCH|CONNECT"}[5m])))', ['a_bucket']],
    ['rate(x_seconds_total[1m]) / rate(x_total[1m])', ['x_seconds_total', 'x_total']],
    ['min(up) and on (instance) b', ['up', 'b']],
  ])('%s reads %j', (expr, names) => {
    expect(metricNames(expr)).toEqual(names);
  });
});

describe('Grafana dashboard', () => {
  it('takes its Prometheus datasource as the ${DS_PROMETHEUS} input, in every panel and query', () => {
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' })]);
    const queried = dashboard.panels.filter((p) => p.type !== 'row');
    expect(queried.length).toBeGreaterThan(10);
    for (const p of queried) {
      expect(p.datasource?.uid, p.title).toBe('${DS_PROMETHEUS}');
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets!) {
        expect(t.datasource?.uid, p.title).toBe('${DS_PROMETHEUS}');
        expect(metricNames(t.expr ?? '').length, `${p.title}: ${t.expr}`).toBeGreaterThan(0);
      }
    }
    for (const v of dashboard.templating.list) expect(v.datasource?.uid, v.name).toBe('${DS_PROMETHEUS}');
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
  });

  it('has the panels operators look at', () => {
    const read = new Set(dashboardMetrics().map((m) => m.metric));
    for (const name of [
      'apiserver_request_total',
      'apiserver_request_duration_seconds_bucket',
      'apiserver_current_inflight_requests',
      'apiserver_longrunning_requests',
      'apiserver_watch_events_total',
      'apiserver_storage_objects',
      'etcd_request_duration_seconds_bucket',
      'apiserver_requested_deprecated_apis',
      'clusterd_raft_is_leader',
      'clusterd_raft_has_leader',
      'clusterd_raft_leader_changes_seen_total',
      'clusterd_raft_proposals_committed_total',
      'clusterd_raft_proposals_applied_total',
      'clusterd_raft_proposals_failed_total',
      'clusterd_raft_proposals_retried_total',
      'clusterd_raft_apply_lag',
      'clusterd_raft_snapshot_save_seconds_total',
    ]) {
      expect(read.has(name), name).toBe(true);
    }
  });

  describe('against a running three-replica cluster', () => {
    let cluster: ClusterProcess;
    const scraped = new Map<string, Exposition>();
    beforeAll(async () => {
      cluster = await ClusterProcess.started();
      for (const name of cluster.names) {
        const r = await cluster.http.request(cluster.url(name), 'GET', '/metrics');
        expect(r.status, `${name} /metrics`).toBe(200);
        scraped.set(name, parseExposition(r.body));
      }
    }, 120_000);
    afterAll(async () => {
      await cluster?.destroy();
    });

    it('every metric the dashboard reads is on every replica', () => {
      const missing: string[] = [];
      for (const [name, e] of scraped) {
        for (const { where, metric } of dashboardMetrics()) if (familyOf(e, metric) === undefined) missing.push(`${metric} (${where}) on replica ${name}`);
      }
      expect(missing).toEqual([]);
      expect(scraped.size).toBe(3);
    });
  });
});
