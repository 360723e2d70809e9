// internal/config/reload-metrics owns upstream's automatic-reload metrics of the structured
// configuration files, shared by the authentication and authorization controllers:
// `apiserver_<subject>_config_controller_automatic_reloads_total{status,apiserver_id_hash}` and
// `..._automatic_reload_last_timestamp_seconds`, the identity hashed as upstream does.
// Imports: nothing from the project.

import { createHash } from 'node:crypto';
import { Counter, Gauge, type Registry } from 'prom-client';

export type ReloadStatus = 'success' | 'failure';

export class ReloadMetrics {
  private readonly reloads: Counter<'status' | 'apiserver_id_hash'>;
  private readonly lastReload: Gauge<'status' | 'apiserver_id_hash'>;
  private readonly idHash: string;

  constructor(registry: Registry, subject: 'authentication' | 'authorization', apiserverId: string) {
    this.idHash = `sha256:${createHash('sha256').update(apiserverId).digest('hex')}`;
    this.reloads = new Counter({
      name: `apiserver_${subject}_config_controller_automatic_reloads_total`,
      help: `Total number of automatic reloads of ${subject} configuration split by status and apiserver identity.`,
      labelNames: ['status', 'apiserver_id_hash'],
      registers: [registry],
    });
    this.lastReload = new Gauge({
      name: `apiserver_${subject}_config_controller_automatic_reload_last_timestamp_seconds`,
      help: `Timestamp of the last automatic reload of ${subject} configuration split by status and apiserver identity.`,
      labelNames: ['status', 'apiserver_id_hash'],
      registers: [registry],
    });
  }

  record(status: ReloadStatus): void {
    this.reloads.inc({ status, apiserver_id_hash: this.idHash });
    this.lastReload.set({ status, apiserver_id_hash: this.idHash }, Date.now() / 1000);
  }
}
