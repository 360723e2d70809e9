// internal/cluster/etcd-leadership owns leadership among API servers sharing one etcd
// (--storage=etcd): every server campaigns in one etcd election (a key under the election
// prefix bound to the server's lease); the one holding the oldest key leads and runs the
// leader-only controllers and compaction. A server whose lease is lost (it died, or could not
// reach etcd for a TTL) stops leading, and another server's campaign wins. The same
// isLeader/onLeadership shape as the Raft replicator's, so the server wires either one.
// Imports: etcd3, log.

import type { Campaign, Etcd3 } from 'etcd3';
import type { Logger } from '../log/logger.js';

/** Seconds a dead leader's lease keeps its leadership (upstream's leader-election lease is 15 s). */
export const LEADER_LEASE_TTL_SECONDS = 10;

export class EtcdLeadership {
  private leading = false;
  private readonly listeners = new Set<(isLeader: boolean) => void>();
  private campaign: Campaign | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly client: Etcd3,
    /** The election's name: servers with one etcd prefix elect one leader. */
    private readonly election: string,
    /** This server's name, the campaign's value (etcdctl shows who leads). */
    private readonly candidate: string,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.stopped || this.campaign) return;
    const campaign = this.client.election(this.election, LEADER_LEASE_TTL_SECONDS).campaign(this.candidate);
    this.campaign = campaign;
    campaign.on('elected', () => {
      if (this.campaign === campaign) this.set(true);
    });
    campaign.on('error', (e: unknown) => {
      if (this.campaign !== campaign) return;
      // The lease is gone (etcd unreachable for its TTL, or revoked): another server may lead
      // already, so stop at once and campaign again.
      this.log.warn('etcd leader election failed; campaigning again', { error: e instanceof Error ? e.message : String(e) });
      this.campaign = undefined;
      this.set(false);
      void campaign.resign().catch(() => {});
      if (!this.stopped) {
        this.retry = setTimeout(() => this.start(), 1000);
        this.retry.unref();
      }
    });
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** Calls `listener` whenever this server gains or loses leadership (and once now). */
  onLeadership(listener: (isLeader: boolean) => void): () => void {
    this.listeners.add(listener);
    listener(this.leading);
    return () => this.listeners.delete(listener);
  }

  private set(leading: boolean): void {
    if (this.leading === leading) return;
    this.leading = leading;
    for (const l of this.listeners) l(leading);
  }

  /** Resigns (another server takes over at once rather than after the lease's TTL). */
  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const campaign = this.campaign;
    this.campaign = undefined;
    this.set(false);
    await campaign?.resign().catch(() => {});
  }
}
