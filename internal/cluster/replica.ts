// internal/cluster/replica owns what makes one API server process a member of a multi-replica
// control plane: its PKI files (from `clusterd pki`, or received when joining), the Raft node
// under the store (RaftReplicator over a LevelDB log and the mutual-TLS peer transport),
// leadership for leader-only work, the member records every replica keeps in the store (API
// address, peer address, configuration hash), automatic promotion of caught-up learners, the
// /cluster/v1 endpoints (members, removal, join, join tokens), the leader's join-token upkeep
// (recording the join-token file, removing expired tokens), the raft and config-hash readyz
// checks and the Raft metrics. Imports: raft (node, storage, transport), store, config,
// auth/authz types, health, log, pki (join token), registry (store error → Status), cluster
// (ids, cluster-id, raft-replicator, join, join-tokens, responses, heap-growth).

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Counter, Gauge, type Registry } from 'prom-client';
import { createRaftLogStore } from '../../raft/storage/log-store-dir.js';
import { removedMembersFile } from '../../raft/storage/removed-members.js';
import { Http2Transport } from '../../raft/transport/http2-transport.js';
import { isRaftNodeError } from '../../raft/node/node-errors.js';
import type { Authorizer } from '../authz/authorizer.js';
import { splitHostPort, type ServerConfig } from '../config/flags.js';
import type { ReloadableFiles } from '../config/reloadable-files.js';
import { saysShuttingDown, type HealthChecks } from '../health/health.js';
import type { Logger } from '../log/logger.js';
import type { PkiPaths } from '../pki/pki.js';
import type { LevelRevisionStore } from '../store/revision-store.js';
import { nodeIdOf, REPLICA_NAME } from './ids.js';
import { RaftReplicator } from './raft-replicator.js';
import { setReplicaHeapGrowth } from './heap-growth.js';
import { RaftLivenessMonitor } from './raft-liveness.js';
import { memberRaftStates, memberReachable, ownRaftState, type MemberRole, type OwnRaftState } from './member-status.js';
import { admitJoiner, clusterFiles, joinCluster, loadJoinedPeers, replicaRequest, type ClusterFiles } from './join.js';
import { clusterIdentity } from './cluster-id.js';
import { handleJoinTokens, JoinTokens } from './join-tokens.js';
import { jsonResponse as json, statusBody } from './responses.js';
import { caHashOf, hashJoinSecret, joinSecretHashMatches, parseJoinToken, type JoinToken } from '../pki/join-token.js';
import { translateStoreError } from '../registry/generic-registry.js';

/**
 * How long an expired join token stays listed (and a join with it is told it expired, not that
 * it is unknown) before the leader removes it; upstream's token cleaner removes at expiry, but
 * its tokens are Secrets an operator can still read.
 */
const EXPIRED_TOKEN_RETENTION_MS = 3600_000;
/** How often the leader looks for expired tokens: the retention above is in hours, so minutes are precise enough. */
const TOKEN_CLEANUP_INTERVAL_MS = 60_000;

/** Where member records live in the store: outside /registry/, so no API serves them. */
export const MEMBER_PREFIX = '/cluster/members/';

export interface MemberRecord {
  name: string;
  id: number;
  peerAddress: string;
  apiAddress: string;
  configHash: string;
}

export interface MemberStatus {
  name: string;
  id: number;
  role: MemberRole;
  peerAddress: string;
  apiAddress: string;
  term: number;
  applied: number;
  lag: number;
  configHash: string;
  /** The member answers this replica (member-status memberReachable); absent when it cannot tell. */
  reachable?: boolean;
}

export interface ClusterReplicaDeps {
  config: ServerConfig;
  log: Logger;
  files: ReloadableFiles;
}

export class ClusterReplica {
  readonly name: string;
  /** The founders' names by member id (--initial-cluster), for members not yet recorded. */
  private readonly founderNames: ReadonlyMap<number, string>;
  readonly id: number;
  readonly peerAddress: string;
  readonly replicator: RaftReplicator;
  readonly pki: PkiPaths;
  private store: LevelRevisionStore | undefined;
  private tokens: JoinTokens | undefined;
  /** Set once the join-token file is known to be recorded (join-tokens.ts). */
  private fileTokenRecorded = false;
  private apiAddress = '';
  private timers: NodeJS.Timeout[] = [];
  private appliedTarget = 0;
  private stopped = false;
  private leaderHash: string | undefined;

  private constructor(
    private readonly deps: ClusterReplicaDeps,
    private readonly paths: ClusterFiles,
    replicator: RaftReplicator,
    private readonly liveness: RaftLivenessMonitor,
    /** Frames written to the peers (the transport exists once Raft runs). */
    private readonly peerTotals: () => { framesSent: number } | undefined,
    /** The cluster id its peers check (cluster-id.ts); a joiner adopts it. */
    private readonly clusterId: string,
  ) {
    this.name = deps.config.name;
    this.founderNames = new Map(deps.config.initialCluster.map((m) => [nodeIdOf(m.name), m.name]));
    this.id = nodeIdOf(this.name);
    this.peerAddress = deps.config.peerAddress!;
    this.replicator = replicator;
    this.pki = paths.pki;
  }

  /**
   * Prepares the replica: on the first start of a joining replica, fetches its certificates
   * and the member list from the cluster (--join, --token); builds the Raft replicator.
   */
  static async open(deps: ClusterReplicaDeps): Promise<ClusterReplica> {
    const { config, log } = deps;
    // Before the store and the cache load: every full collection's limit from here on.
    const growth = setReplicaHeapGrowth();
    if (growth) log.info('replica heap growth set', { flag: growth });
    const pkiDir = config.pkiDir ?? join(config.dataDir, 'pki');
    const raftDir = join(config.dataDir, 'raft');
    const paths = clusterFiles(pkiDir, config.name);
    const firstStart = !existsSync(raftDir);
    let joinedPeers: Map<number, string> | undefined;
    let joinedClusterId: string | undefined;
    if (config.join) {
      if (firstStart || !existsSync(paths.peerCert)) {
        // Only the first start needs the token (a replica that has joined holds its certificates
        // and members), so a restart works after the token expired or without the flag.
        if (!config.token) throw new Error(`--join needs --token to join the cluster (this data directory, ${config.dataDir}, has not joined yet): create one with \`clusterd token create\` on a member`);
        log.warn('joining cluster', { via: config.join, name: config.name });
        ({ peers: joinedPeers, clusterId: joinedClusterId } = await joinCluster({ api: config.join, token: config.token, name: config.name, peerAddress: config.peerAddress!, advertiseAddress: config.advertiseAddress, dataDir: config.dataDir, pkiDir }, log));
      } else {
        joinedPeers = loadJoinedPeers(config.dataDir);
      }
    }
    for (const f of [paths.peerCaCert, paths.peerCert, paths.peerKey, paths.pki.caCert, paths.pki.serverCert, paths.pki.serverKey]) {
      if (!existsSync(f)) throw new Error(`cluster PKI file ${f} is missing: create the PKI with \`clusterd pki --out ${pkiDir} --replica ${config.name}=<host>\` and copy it to every replica, or join with --join and --token`);
    }
    mkdirSync(raftDir, { recursive: true });
    const peers = new Map<number, string>(joinedPeers ?? []);
    for (const m of config.initialCluster) peers.set(nodeIdOf(m.name), `https://${m.peerAddress}`);
    peers.set(nodeIdOf(config.name), `https://${config.peerAddress!}`);
    const peerCa = readFileSync(paths.peerCaCert, 'utf8');
    const clusterId = clusterIdentity(config.dataDir, peerCa, { firstStart, founders: config.join ? [] : config.initialCluster, joined: joinedClusterId });
    // Peers refusing each other for another cluster id is an operator's mistake to hear about
    // (the transport's other lines are debug), at most every 30 s.
    let lastMismatchWarning = -Infinity;
    const mismatchWarning = (line: string): void => {
      if (performance.now() - lastMismatchWarning < 30_000) return;
      lastMismatchWarning = performance.now();
      log.warn('raft peers of another cluster id: a replica started with another --initial-cluster than the founders, or a member of another cluster with this peer CA', { clusterId, detail: line });
    };
    const [host, port] = splitHostPort(config.peerAddress!);
    const founderNames = new Map(config.initialCluster.map((m) => [nodeIdOf(m.name), m.name]));
    const liveness = new RaftLivenessMonitor({
      log,
      id: nodeIdOf(config.name),
      heartbeatIntervalMs: config.heartbeatIntervalMs,
      electionTimeoutMs: config.electionTimeoutMs,
      status: () => {
        const s = replicator.status();
        return s && ownRaftState(s);
      },
      peerName: (id) => founderNames.get(id),
      leader: () => {
        try {
          return replicator.raft.leader();
        } catch {
          return 0; // not started yet
        }
      },
    });
    let peerTransport: Http2Transport | undefined;
    const replicator: RaftReplicator = new RaftReplicator({
      leaderWaitMs: Math.max(3000, 3 * config.electionTimeoutMs),
      node: {
        id: nodeIdOf(config.name),
        peers,
        ...(config.join ? { join: true } : {}),
        // Snapshots stay in files end to end (taken as a stream, sent and received as one,
        // restored from one): a store of any size is never held whole in memory.
        store: liveness.store(createRaftLogStore(raftDir, { snapshotRefs: true })),
        // The removals this replica applied, kept past snapshots: its transport refuses a member
        // removed while that one was down, with the index (which then says so and stops campaigning).
        removedMembers: removedMembersFile(raftDir),
        transport: (handler) =>
          liveness.transport((peerTransport = new Http2Transport({
            id: nodeIdOf(config.name),
            // Peers of another cluster (another peer CA) are refused by TLS already; the id
            // (cluster-id.ts) keeps two clusters sharing a CA by mistake from mixing, and a
            // founder started with another member list from joining the others.
            clusterId,
            listen: { host: config.peerBindAddress ?? host, port },
            tls: { ca: peerCa, cert: readFileSync(paths.peerCert, 'utf8'), key: readFileSync(paths.peerKey, 'utf8') },
            handler: liveness.handler(handler),
            peerCommonName: (id) => `raft-member-${id}`,
            backoff: { initialMs: 50, maxMs: 1000 },
            // A black-holed peer is noticed within about five election timeouts (PING every
            // election timeout, unanswered for five, at least 5 s), and a connection that never
            // comes up is given up as quickly. Tighter bounds (two election timeouts) replaced
            // healthy sessions whose acknowledgements were merely late on a loaded 2-core host
            // and cost elections under a burst of writes; Raft itself needs none of this to
            // stay safe, only to recover from a silent link.
            connectTimeoutMs: Math.max(5000, 5 * config.electionTimeoutMs),
            keepaliveIntervalMs: config.electionTimeoutMs,
            keepaliveTimeoutMs: Math.max(5000, 5 * config.electionTimeoutMs),
            snapshotSpoolDir: join(raftDir, 'snapshots'),
            log: (line) => (line.includes('cluster id mismatch') ? mismatchWarning(line) : log.debug(line)),
          }))),
        tickMs: config.heartbeatIntervalMs,
        electionTicks: Math.max(5, Math.round(config.electionTimeoutMs / config.heartbeatIntervalMs)),
        heartbeatTicks: 1,
        snapshotEntries: config.snapshotCount,
        catchUpEntries: 5_000,
        proposalTimeoutMs: 10_000,
        readTimeoutMs: Math.max(2000, 2 * config.electionTimeoutMs),
        logger: {
          enabled: (level) => level === 'error' || level === 'warn',
          log: (level, msg) => (level === 'error' ? log.error(msg) : log.warn(msg)),
        },
        onFatal: (err) => log.error('raft node stopped on a fatal error', { error: err }),
      },
    });
    return new ClusterReplica(deps, paths, replicator, liveness, () => peerTransport?.totals, clusterId);
  }

  /** Starts Raft over the opened store (replays what the store has not applied yet). */
  async run(store: LevelRevisionStore): Promise<void> {
    this.store = store;
    this.tokens = new JoinTokens(store, this.deps.log);
    this.liveness.start();
    await this.replicator.run(store);
  }

  /** Resolves once a leader is known (logging while it waits). */
  async waitForLeader(): Promise<void> {
    let waited = 0;
    while (!this.stopped && !this.own()?.hasLeader) {
      await sleep(50);
      waited += 50;
      if (waited % 5000 === 0) this.deps.log.warn('waiting for a Raft leader (a quorum of replicas must be reachable)', { waitedMs: waited });
    }
  }

  /** Starts the background duties: member record upkeep, learner promotion, leader hash tracking. */
  startBackground(apiAddress: string): void {
    this.apiAddress = apiAddress;
    const tick = (f: () => Promise<void>, ms: number) => {
      let busy = false;
      const t = setInterval(() => {
        if (busy || this.stopped) return;
        busy = true;
        f()
          .catch((e: unknown) => this.deps.log.debug('cluster background task failed', { error: e instanceof Error ? e.message : String(e) }))
          .finally(() => (busy = false));
      }, ms);
      t.unref();
      this.timers.push(t);
    };
    tick(() => this.publishRecord(), 1000);
    tick(() => this.promoteLearners(), 500);
    // The join-token file counts from the cluster's first leader: recorded then, with the default TTL.
    tick(async () => {
      if (!this.fileTokenRecorded && this.replicator.isLeader()) await this.recordFileToken();
    }, 1000);
    tick(async () => {
      if (this.replicator.isLeader()) await this.tokens?.removeExpired(EXPIRED_TOKEN_RETENTION_MS);
    }, TOKEN_CLEANUP_INTERVAL_MS);
    tick(async () => {
      this.leaderHash = await this.readLeaderHash();
    }, 1000);
  }

  /** Writes this replica's record when it differs from what the store holds. */
  private async publishRecord(): Promise<void> {
    const store = this.store;
    if (!store || !this.own()?.hasLeader) return;
    const key = MEMBER_PREFIX + this.name;
    const record: MemberRecord = { name: this.name, id: this.id, peerAddress: this.peerAddress, apiAddress: this.apiAddress, configHash: this.deps.files.loaded.hash };
    const value = Buffer.from(JSON.stringify(record));
    const current = await store.get(key);
    if (current && Buffer.from(current.value).equals(value)) return;
    await store.execute({ type: 'txn', compares: [{ key, modRevision: current?.modRevision ?? 0 }], ops: [{ type: 'put', key, value }] });
  }

  /** This replica's join-token file's token, when the file is there and readable. */
  private fileToken(): JoinToken | undefined {
    try {
      return parseJoinToken(readFileSync(this.paths.joinToken, 'utf8'));
    } catch {
      return undefined;
    }
  }

  /** Records the join-token file's token unless it was before; true when this call recorded it. */
  private async recordFileToken(): Promise<boolean> {
    const token = this.fileToken();
    if (!token || !this.tokens) return false;
    const recorded = await this.tokens.registerFileToken(token);
    this.fileTokenRecorded = true;
    return recorded;
  }

  /** Leader: a learner whose log is close to the commit index becomes a voter. */
  private async promoteLearners(): Promise<void> {
    const s = this.replicator.status();
    if (!s || s.role !== 'leader' || !s.progress) return;
    for (const id of s.membership.learners) {
      const p = s.progress.get(id);
      if (!p || p.match === 0 || s.commit - p.match > 100) continue;
      this.deps.log.warn('promoting caught-up learner to voter', { id, match: p.match, commit: s.commit });
      await this.replicator.raft.promote(id);
    }
  }

  private async records(): Promise<Map<number, MemberRecord>> {
    const out = new Map<number, MemberRecord>();
    if (!this.store) return out;
    const { kvs } = await this.store.range(MEMBER_PREFIX);
    for (const kv of kvs) {
      try {
        const r = JSON.parse(Buffer.from(kv.value).toString()) as MemberRecord;
        out.set(r.id, r);
      } catch {
        // A record written by a newer version: ignored rather than fatal.
      }
    }
    return out;
  }

  private async readLeaderHash(): Promise<string | undefined> {
    const s = this.own();
    if (!s?.hasLeader) return undefined;
    return (await this.records()).get(s.leader)?.configHash;
  }

  /** This replica's own Raft state (member-status), undefined before Raft runs. */
  private own(): OwnRaftState | undefined {
    const s = this.replicator.status();
    return s && ownRaftState(s);
  }

  /** This replica's view of the members (authoritative on the leader). */
  async localMembers(): Promise<MemberStatus[]> {
    const s = this.replicator.status();
    if (!s) return [];
    const records = await this.records();
    return memberRaftStates(s)
      .map(({ id, role, term, applied, lag }): MemberStatus => {
        const r = records.get(id);
        const isSelf = id === this.id;
        const peerUrl = s.peers.get(id);
        const reachable = memberReachable(s, id, this.liveness.silenceMs(id), this.deps.config.electionTimeoutMs);
        return {
          // A member's own record is published a moment after it first knows a leader; until
          // then a founder's name is known from --initial-cluster.
          name: r?.name ?? (isSelf ? this.name : (this.founderNames.get(id) ?? String(id))),
          id,
          role,
          peerAddress: r?.peerAddress ?? (peerUrl ? peerUrl.replace(/^https:\/\//, '') : ''),
          apiAddress: r?.apiAddress ?? (isSelf ? this.apiAddress : ''),
          term,
          applied,
          lag,
          configHash: r?.configHash ?? (isSelf ? this.deps.files.loaded.hash : ''),
          ...(reachable === undefined ? {} : { reachable }),
        };
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The member list, asked of the leader when this replica is not it (falls back to the local view). */
  async members(): Promise<MemberStatus[]> {
    const s = this.own();
    if (!s || s.isLeader || !s.hasLeader) return this.localMembers();
    const leader = (await this.records()).get(s.leader);
    if (leader?.apiAddress) {
      try {
        const res = await adminRequest(this.pki, 'GET', `${leader.apiAddress}/cluster/v1/members?local=true`);
        if (res.status === 200) return (JSON.parse(res.body) as { members: MemberStatus[] }).members;
      } catch (e) {
        this.deps.log.debug('asking the leader for the member list failed', { error: e instanceof Error ? e.message : String(e) });
      }
    }
    return this.localMembers();
  }

  /** Public authorizer: the join endpoints check the join token themselves. */
  readonly authorizer: Authorizer = {
    name: 'cluster-join',
    authorize: (a) =>
      !a.isResourceRequest && ((a.verb === 'get' && a.path === '/cluster/v1/join/ca') || (a.verb === 'post' && a.path === '/cluster/v1/join'))
        ? { decision: 'allow', reason: 'the join endpoints authenticate the join token themselves' }
        : { decision: 'noOpinion', reason: '' },
  };

  /** Serves /cluster/v1/…; undefined for other paths. */
  async handle(method: string, path: string, query: URLSearchParams, body: () => Promise<string>): Promise<Response | undefined> {
    if (!path.startsWith('/cluster/v1/')) return undefined;
    if (path === '/cluster/v1/members' && method === 'GET') {
      const local = query.get('local') === 'true';
      // A replica outside the membership it applied (removed while still running) would list
      // the members it last knew, naming a leader that no longer answers it and lags it cannot
      // know: say what it is instead, as etcd's removed member refuses with "member removed".
      // Its own view (?local=true, for tests and diagnosis) stays available.
      const own = this.own();
      if (!local && own && !own.isMember) {
        return json(
          503,
          statusBody(503, 'ServiceUnavailable', `replica "${this.name}" is not a member of the cluster (it was removed, or its admission is not applied here yet): list the members through another replica`),
        );
      }
      const members = local ? await this.localMembers() : await this.members();
      return json(200, { kind: 'MemberList', apiVersion: 'v1', members });
    }
    const m = /^\/cluster\/v1\/members\/([^/]+)$/.exec(path);
    if (m && method === 'DELETE') return this.removeMember(decodeURIComponent(m[1]!));
    if (path === '/cluster/v1/join/ca' && method === 'GET') {
      return json(200, { ca: readFileSync(this.pki.caCert, 'utf8') });
    }
    if (path === '/cluster/v1/tokens' || path.startsWith('/cluster/v1/tokens/')) {
      if (!this.tokens) return json(503, statusBody(503, 'ServiceUnavailable', 'the store is not open yet'));
      try {
        return await handleJoinTokens(method, path, body, { tokens: this.tokens, caHash: () => caHashOf(readFileSync(this.pki.caCert, 'utf8')) });
      } catch (e) {
        throw translateStoreError(e);
      }
    }
    if (path === '/cluster/v1/join' && method === 'POST') {
      const text = await body();
      // A join request is a few hundred bytes; anyone may send one, so bound what is parsed.
      if (text.length > 64 * 1024) return json(413, statusBody(413, 'RequestEntityTooLarge', 'the join request is too large'));
      return this.admit(text);
    }
    return json(405, statusBody(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`));
  }

  private async removeMember(name: string): Promise<Response> {
    if (!REPLICA_NAME.test(name)) return json(400, statusBody(400, 'BadRequest', `invalid replica name "${name}"`));
    const id = nodeIdOf(name);
    const s = this.replicator.status();
    const cs = s?.membership;
    if (!cs || ![...cs.voters, ...cs.learners].includes(id)) return json(404, statusBody(404, 'NotFound', `member "${name}" not found`));
    try {
      await this.replicator.raft.removeMember(id);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      return json(isRaftNodeError(e, 'PROPOSAL_DROPPED') ? 503 : 422, statusBody(isRaftNodeError(e, 'PROPOSAL_DROPPED') ? 503 : 422, isRaftNodeError(e, 'PROPOSAL_DROPPED') ? 'ServiceUnavailable' : 'Invalid', `member "${name}" was not removed: ${message}`));
    }
    const key = MEMBER_PREFIX + name;
    const current = await this.store!.get(key);
    if (current) await this.store!.execute({ type: 'txn', compares: [{ key, modRevision: current.modRevision }], ops: [{ type: 'delete', key }] }).catch(() => undefined);
    return json(200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, kind: 'members' } });
  }

  /** Admits a joining replica: checks its token, issues its certificates, adds it as a learner. */
  private async admit(raw: string): Promise<Response> {
    return admitJoiner(raw, {
      pkiDir: this.paths.dir,
      paths: this.paths,
      status: () => this.replicator.status(),
      addLearner: (id, url) => this.replicator.raft.addLearner(id, url),
      checkToken: async (token) => {
        const tokens = this.tokens;
        if (!tokens) throw new Error('the store is not open yet');
        const first = await tokens.check(token);
        // A join may arrive before the leader recorded the join-token file (a cluster just
        // formed): a token that is this replica's file is recorded here, then checked again.
        const file = this.fileToken();
        if (first.ok || first.reason !== 'unknown' || token.id !== undefined || !file || !joinSecretHashMatches(hashJoinSecret(file.secret), token.secret)) return first;
        return (await this.recordFileToken()) ? tokens.check(token) : first;
      },
      clusterId: this.clusterId,
      log: this.deps.log,
    });
  }

  /** readyz checks: a leader is known and this replica applied what it learned was committed; same configuration as the leader. */
  addHealthChecks(health: HealthChecks): void {
    health.add(['readyz'], {
      name: 'raft',
      check: () => {
        const s = this.own();
        if (!s) throw new Error('raft not started');
        if (s.removed) throw new Error(`removed from the cluster at log index ${s.removed.at} (member ${s.removed.by} refused this replica)`);
        if (!s.hasLeader) throw new Error('no Raft leader known');
        // The commit index learned at the previous check must be applied by now: a replica
        // under steady load is ready, one that stopped applying is not.
        const target = this.appliedTarget;
        this.appliedTarget = s.commit;
        if (s.applied < target) throw new Error(`applied index ${s.applied} is behind the commit index ${target}`);
      },
    });
    health.add(['readyz'], {
      name: 'config-hash',
      check: () => {
        const own = this.deps.files.loaded;
        if (own.error) throw new Error(own.error);
        if (this.leaderHash !== undefined && this.leaderHash !== own.hash) {
          throw new Error(`loaded configuration ${own.hash} differs from the leader's ${this.leaderHash}`);
        }
      },
    });
  }

  /** The Raft figures an etcd operator looks at, named after etcd's where one exists. */
  registerMetrics(registry: Registry): void {
    const r = this.replicator;
    const status = () => this.own();
    const stats = () => {
      try {
        return r.raft.stats();
      } catch {
        return undefined;
      }
    };
    const gauge = (name: string, help: string, value: () => number) =>
      new Gauge({ name, help, registers: [registry], collect() { this.set(value()); } });
    const counter = (name: string, help: string, value: () => number) =>
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(value());
        },
      });
    gauge('clusterd_raft_has_leader', 'Whether a Raft leader is known (1) or not (0).', () => (status()?.hasLeader ? 1 : 0));
    gauge('clusterd_raft_is_leader', 'Whether this replica is the Raft leader.', () => (status()?.isLeader ? 1 : 0));
    counter('clusterd_raft_leader_changes_seen_total', 'Leader changes this replica has seen.', () => r.leaderChanges);
    gauge('clusterd_raft_term', 'Current Raft term.', () => status()?.term ?? 0);
    gauge('clusterd_raft_proposals_committed_total', 'Raft commit index (entries committed).', () => status()?.commit ?? 0);
    gauge('clusterd_raft_proposals_applied_total', 'Raft applied index (entries applied to this replica\'s store).', () => status()?.applied ?? 0);
    gauge('clusterd_raft_proposals_pending', 'Writes proposed by this replica and not yet applied here.', () => r.pending);
    counter('clusterd_raft_proposals_failed_total', 'Writes proposed here that failed (not proposed, or of unknown outcome).', () => r.failed.notProposed + r.failed.unknown);
    counter('clusterd_raft_proposals_retried_total', 'Writes proposed here again because an attempt was certainly not made (no leader, or lost on the way to it); not failures unless the wait ran out.', () => r.proposalsRetried);
    counter('clusterd_raft_read_index_failures_total', 'Consistent reads (and the reads writes begin with) that failed on this replica because no leader confirmed them in time.', () => r.readsFailed);
    gauge('clusterd_raft_apply_lag', 'Committed entries not yet applied on this replica.', () => status()?.applyLag ?? 0);
    gauge('clusterd_raft_snapshot_index', 'Log index of the latest Raft snapshot.', () => status()?.snapshotIndex ?? 0);
    counter('clusterd_raft_snapshots_total', 'Raft snapshots made durable.', () => stats()?.snapshots ?? 0);
    counter('clusterd_raft_snapshot_save_seconds_total', 'Time spent writing Raft snapshots.', () => (stats()?.snapshotSaveMs ?? 0) / 1000);
    counter('clusterd_raft_wal_fsyncs_total', 'Synced Raft log writes.', () => stats()?.syncedSaves ?? 0);
    counter('clusterd_raft_wal_fsync_seconds_total', 'Time spent in Raft log writes.', () => (stats()?.saveMs ?? 0) / 1000);
    counter('clusterd_raft_apply_batches_total', 'Batches of committed entries applied to this replica\'s store (each one store write).', () => stats()?.applyBatches ?? 0);
    counter('clusterd_raft_messages_sent_total', 'Raft messages this replica handed to its peer transport.', () => stats()?.messagesSent ?? 0);
    counter('clusterd_raft_leader_down_reports_total', 'Times this follower forgot its leader because the leader\'s peer address refused connections, and campaigned early.', () => stats()?.leaderDownReports ?? 0);
    counter('clusterd_raft_peer_frames_sent_total', 'Batches of Raft messages this replica wrote to its peers (one socket write each).', () => this.peerTotals()?.framesSent ?? 0);
    counter('clusterd_raft_read_index_requests_total', 'Read-index requests this replica sent (one covers every consistent read that arrived before it; resends included).', () => stats()?.readRequests ?? 0);
    counter('clusterd_raft_reads_total', 'Consistent reads confirmed through ReadIndex on this replica.', () => stats()?.readsServed ?? 0);
    this.liveness.registerMetrics(registry);
    gauge('clusterd_config_hash_mismatch', 'Whether this replica loaded another authentication/authorization configuration than the leader.', () =>
      this.leaderHash !== undefined && this.leaderHash !== this.deps.files.loaded.hash ? 1 : 0,
    );
    const info = new Gauge({ name: 'clusterd_config_hash_info', help: 'The hash of the loaded authentication/authorization configuration.', labelNames: ['hash'], registers: [registry] });
    const setInfo = () => {
      info.reset();
      info.set({ hash: this.deps.files.loaded.hash }, 1);
    };
    setInfo();
    this.deps.files.onChange(setInfo);
  }

  /**
   * Hands leadership to the most caught-up reachable voter before this replica stops, as etcd
   * does on a graceful stop: the others keep a leader throughout instead of electing one once
   * this process is gone, and writes in flight here are forwarded to it meanwhile. Resolves with
   * the new leader's id, or undefined (at once when this replica does not lead or has no voter
   * to hand to; after at most two election timeouts when the transfer fails). The stop goes on
   * either way.
   */
  async handOffLeadership(): Promise<number | undefined> {
    const s = this.replicator.status();
    if (!s || s.role !== 'leader' || !s.progress) return undefined;
    const voters = new Set([...s.membership.voters, ...s.membership.votersOutgoing]);
    const candidates: { id: number; match: number }[] = [];
    for (const [id, p] of s.progress) {
      if (id === s.id || !voters.has(id)) continue;
      if (!memberReachable(s, id, this.liveness.silenceMs(id), this.deps.config.electionTimeoutMs)) continue;
      candidates.push({ id, match: p.match });
    }
    candidates.sort((a, b) => b.match - a.match);
    const records = await this.records().catch(() => undefined);
    // A whole cluster stopped at once (make cluster's Ctrl-C, compose down): a voter stopping
    // too would take leadership only to drop it, and the others would wait out a failed
    // transfer and then an election. Its /readyz/shutdown says so from the moment it began.
    let best: { id: number; match: number } | undefined;
    for (const c of candidates) {
      const api = records?.get(c.id)?.apiAddress;
      if (api && (await this.isStopping(api))) continue;
      best = c;
      break;
    }
    if (!best) {
      if (candidates.length > 0) this.deps.log.info('not handing leadership over before stopping: every other voter is stopping too');
      return undefined;
    }
    const to = records?.get(best.id)?.name ?? this.founderNames.get(best.id) ?? String(best.id);
    // Signals sent together reach processes apart: a voter asked a moment before its own
    // SIGTERM was handled looks up. Asked again while the transfer runs, it says it is stopping
    // too, and waiting out the transfer (two election timeouts) would only stall this stop.
    const api = records?.get(best.id)?.apiAddress;
    const transfer = this.replicator.raft.transferLeadership(best.id).then(
      () => 'moved' as const,
      (e: unknown) => e,
    );
    let watching = true;
    const targetStopping = (async (): Promise<'stopping' | undefined> => {
      while (api && watching) {
        await sleep(TRANSFER_TARGET_POLL_MS);
        if (watching && (await this.isStopping(api))) return 'stopping';
      }
      return undefined;
    })();
    const outcome = await Promise.race([transfer, targetStopping.then((r) => r ?? transfer)]);
    watching = false;
    if (outcome === 'moved') {
      this.deps.log.warn('handed leadership over before stopping', { to });
      return best.id;
    }
    if (outcome === 'stopping') {
      this.deps.log.info('not handing leadership over before stopping: the voter chosen began stopping too', { to });
      return undefined;
    }
    this.deps.log.warn('could not hand leadership over before stopping; the others elect a leader', { to, error: outcome instanceof Error ? outcome.message : String(outcome) });
    return undefined;
  }

  /** Whether the replica serving the API at `api` says it is shutting down (or refuses connections). */
  private async isStopping(api: string): Promise<boolean> {
    try {
      const r = await adminRequest(this.pki, 'GET', `${api}/readyz/shutdown`, undefined, 1000);
      return saysShuttingDown(r.status, r.body);
    } catch (e) {
      // Refused: its listener is closed, it is on its way out. Anything else (slow, unreachable
      // from here) says nothing, and the transfer is tried as before.
      return (e as NodeJS.ErrnoException).code === 'ECONNREFUSED';
    }
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.liveness.stop();
    for (const t of this.timers) clearInterval(t);
    // The store closes the replicator (and with it the Raft node).
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** How often a stopping leader asks its transfer target whether it began stopping too. */
const TRANSFER_TARGET_POLL_MS = 100;

/** A request to another replica's API with the admin certificate every replica holds. */
export function adminRequest(pki: PkiPaths, method: string, url: string, body?: string, timeoutMs = 3000): Promise<{ status: number; body: string }> {
  return replicaRequest(url, method, { ca: readFileSync(pki.caCert), cert: readFileSync(pki.adminCert), key: readFileSync(pki.adminKey) }, body, timeoutMs);
}
