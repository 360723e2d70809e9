// e2e/support/retrying-watcher owns the watch client of the cluster e2e tests, written the way a
// controller's reflector behaves across replicas: list once (consistent), then watch from the
// list's resourceVersion; whenever the stream ends (server timeout, replica killed or stopped,
// an error) watch again from the last resourceVersion seen — on the next replica in turn, so
// that resumes cross replicas — and relist only on 410 Gone. It keeps what it saw (every event
// with its receive time on the monotonic clock, the reconstructed state, resumes, relists and
// every incident) for the validators in watch-validation.ts. Test-only.

import type { ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Credentials } from './https-client.js';
import { HttpsClient } from './https-client.js';
import { monotonicMs } from './load-protocol.js';

export interface WatchEventRecord {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  name: string;
  value: string;
  rv: string;
  uid: string;
  /** Receive time (monotonic ms). */
  t: number;
  replica: string;
  /** Which stream (0 = the first watch; bumped on every reconnect). */
  stream: number;
}

export interface WatchIncident {
  t: number;
  replica: string;
  kind: 'connect-failed' | 'http-error' | 'ended' | 'error-event' | 'expired' | 'relist' | 'bookmark-back' | 'parse';
  detail: string;
}

/** What a watcher recorded, as the validators (history-analysis) read it. */
export interface WatchLog {
  readonly id: string;
  readonly events: readonly WatchEventRecord[];
  readonly initialState: ReadonlyMap<string, { value: string; rv: string }>;
  readonly state: ReadonlyMap<string, { value: string; rv: string }>;
  readonly streamFrom: ReadonlyArray<{ replica: string; from: string }>;
  readonly startRv: string;
  readonly lastRv: string;
  readonly expired: number;
  readonly relists: number;
}

export interface RetryingWatcherOptions {
  id: string;
  /** Replicas to watch through (name → URL), read at every (re)connect: replicas may come and go. */
  replicas: () => Array<[string, string]>;
  /** The replica of the first list and watch. */
  preferred: string;
  creds: Credentials;
  /** Collection path, e.g. /api/v1/namespaces/default/configmaps. */
  path: string;
  /** Server-side stream timeout range (timeoutSeconds), so streams end and resume regularly. */
  streamSeconds?: [number, number];
  log?: (line: string) => void;
}

export class RetryingWatcher implements WatchLog {
  readonly events: WatchEventRecord[] = [];
  readonly incidents: WatchIncident[] = [];
  readonly state = new Map<string, { value: string; rv: string }>();
  /** The state the first list returned (the validators replay the events over it). */
  readonly initialState = new Map<string, { value: string; rv: string }>();
  /** Each stream's replica and the version it resumed from, by stream number. */
  readonly streamFrom: Array<{ replica: string; from: string }> = [];
  /** The list's resourceVersion the watch started from. */
  startRv = '0';
  /** The newest resourceVersion seen (event or bookmark). */
  lastRv = '0';
  /** Streams established after the first (each from lastRv). */
  resumes = 0;
  relists = 0;
  expired = 0;
  /** Streams established, by replica. */
  readonly streamsBy = new Map<string, number>();
  private stopped = false;
  private req: ClientRequest | undefined;
  private loop: Promise<void> | undefined;
  private next = 0;
  private streams = 0;
  private readonly http: HttpsClient;

  constructor(private readonly o: RetryingWatcherOptions) {
    this.http = new HttpsClient(o.creds);
  }

  get id(): string {
    return this.o.id;
  }

  /** Lists (retrying until it succeeds) and starts watching in the background. */
  async start(): Promise<void> {
    const names = this.o.replicas().map(([n]) => n);
    this.next = Math.max(0, names.indexOf(this.o.preferred));
    await this.relist();
    this.startRv = this.lastRv;
    for (const [k, v] of this.state) this.initialState.set(k, { ...v });
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.req?.destroy();
    await this.loop;
    this.http.close();
  }

  private pick(): [string, string] {
    const list = this.o.replicas();
    const r = list[this.next % list.length]!;
    this.next++;
    return r;
  }

  private incident(replica: string, kind: WatchIncident['kind'], detail: string): void {
    this.incidents.push({ t: monotonicMs(), replica, kind, detail });
  }

  private async relist(): Promise<void> {
    for (;;) {
      const [name, url] = this.pick();
      try {
        const r = await this.http.json<{ metadata: { resourceVersion: string }; items: Array<{ metadata: { name: string; resourceVersion: string }; data?: { v?: string } }> }>(url, 'GET', this.o.path, undefined, 10_000);
        if (r.status === 200) {
          this.state.clear();
          for (const item of r.body.items) this.state.set(item.metadata.name, { value: item.data?.v ?? '', rv: item.metadata.resourceVersion });
          this.lastRv = r.body.metadata.resourceVersion;
          if (this.startRv !== '0') {
            this.relists++;
            this.incident(name, 'relist', `at ${this.lastRv}`);
          }
          return;
        }
        this.incident(name, 'http-error', `list ${r.status}`);
      } catch (e) {
        this.incident(name, 'connect-failed', `list: ${String(e)}`);
      }
      if (this.stopped) return;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const [name, url] = this.pick();
      const outcome = await this.watchOnce(name, url);
      if (this.stopped) return;
      if (outcome === 'expired') {
        this.expired++;
        await this.relist();
      }
      // Resume at once after a clean end; back off a little after a failure.
      await new Promise((r) => setTimeout(r, outcome === 'ended' ? 0 : 100));
    }
  }

  private watchOnce(replica: string, base: string): Promise<'ended' | 'failed' | 'expired'> {
    const [lo, hi] = this.o.streamSeconds ?? [5, 15];
    const timeoutSeconds = lo + Math.floor(Math.random() * (hi - lo + 1));
    const from = this.lastRv;
    const url = new URL(`${this.o.path}?watch=true&allowWatchBookmarks=true&resourceVersion=${from}&timeoutSeconds=${timeoutSeconds}`, base);
    return new Promise((resolve) => {
      let settled = false;
      let outcome: 'ended' | 'failed' | 'expired' = 'ended';
      const finish = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(guard);
        this.req = undefined;
        resolve(outcome);
      };
      const req = httpsRequest(url, { method: 'GET', ca: this.o.creds.ca, cert: this.o.creds.cert, key: this.o.creds.key, agent: false, headers: { accept: 'application/json' } }, (res) => {
        if (res.statusCode !== 200) {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => {
            outcome = res.statusCode === 410 ? 'expired' : 'failed';
            this.incident(replica, res.statusCode === 410 ? 'expired' : 'http-error', `watch from ${from}: ${String(res.statusCode)} ${body.slice(0, 200)}`);
            finish();
          });
          res.on('error', () => finish());
          return;
        }
        const stream = this.streams++;
        this.streamFrom.push({ replica, from });
        if (stream > 0) this.resumes++;
        this.streamsBy.set(replica, (this.streamsBy.get(replica) ?? 0) + 1);
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line && this.onLine(line, replica, stream) === 'expired') {
              outcome = 'expired';
              req.destroy();
            }
          }
        });
        res.on('end', () => {
          this.incident(replica, 'ended', `stream ${stream} from ${from}`);
          finish();
        });
        res.on('error', () => finish());
        res.on('close', () => finish());
      });
      this.req = req;
      req.on('error', (e) => {
        if (!settled && outcome === 'ended') {
          outcome = 'failed';
          this.incident(replica, 'connect-failed', `watch from ${from}: ${e.message}`);
        }
        finish();
      });
      // A replica that is frozen (SIGSTOP) never ends the stream itself.
      const guard = setTimeout(() => req.destroy(), (timeoutSeconds + 10) * 1000);
      req.end();
    });
  }

  private onLine(line: string, replica: string, stream: number): 'expired' | undefined {
    const t = monotonicMs();
    let ev: { type: string; object: { code?: number; message?: string; metadata?: { name?: string; resourceVersion?: string; uid?: string }; data?: { v?: string } } };
    try {
      ev = JSON.parse(line) as typeof ev;
    } catch {
      this.incident(replica, 'parse', line.slice(0, 200));
      return undefined;
    }
    if (ev.type === 'ERROR') {
      const code = ev.object.code ?? 0;
      this.incident(replica, code === 410 ? 'expired' : 'error-event', `${code} ${String(ev.object.message)}`);
      return code === 410 ? 'expired' : undefined;
    }
    const rv = ev.object.metadata?.resourceVersion ?? '0';
    if (ev.type === 'BOOKMARK') {
      if (Number(rv) < Number(this.lastRv)) this.incident(replica, 'bookmark-back', `bookmark ${rv} after ${this.lastRv}`);
      else this.lastRv = rv;
      return undefined;
    }
    const name = ev.object.metadata?.name ?? '';
    const value = ev.object.data?.v ?? '';
    this.events.push({ type: ev.type as WatchEventRecord['type'], name, value, rv, uid: ev.object.metadata?.uid ?? '', t, replica, stream });
    if (ev.type === 'DELETED') this.state.delete(name);
    else this.state.set(name, { value, rv });
    // Kept even if it goes backwards: the validators report it (never resume from an older version).
    if (Number(rv) > Number(this.lastRv)) this.lastRv = rv;
    return undefined;
  }
}
