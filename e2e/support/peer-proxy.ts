// e2e/support/peer-proxy owns cutting replicas off from their Raft peers in the multi-replica
// e2e tests, with real TCP and no root: one proxy per replica listens on the peer address the
// cluster knows the replica by (its --initial-cluster / --peer-address entry, 127.0.0.1:P) and
// forwards to the replica's real listener, which binds the same port on another loopback IP
// (--peer-bind-address, e.g. 127.0.13.1:P). Every Raft connection into a replica therefore
// crosses its proxy.
//
// Each direction of Raft traffic has its own connection (raft/transport/http2-transport: a
// member dials each peer for the messages it sends), so a proxy in front of the listener sees
// only who is called, not who calls. The caller is identified on loopback from /proc: the
// accepted socket's remote port is the caller's local port, /proc/net/tcp maps that to a socket
// inode, and the replica process holding a file descriptor for `socket:[inode]` is the caller.
//
// A cut is a black hole, as a pulled cable: bytes on a cut link are read and dropped (no reset,
// the sender learns nothing but silence); new connections on it are accepted and held without
// a backend. Healing destroys the held connections so their senders reconnect (an HTTP/2
// session that lost bytes in the middle could not resume anyway). Test-only, Linux-only.

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import * as net from 'node:net';

export interface ProxyLink {
  /** Replica that dialled (undefined while or if unknown). */
  from: string | undefined;
  /** Replica the proxy fronts. */
  to: string;
  client: net.Socket;
  backend: net.Socket | undefined;
  blackholed: boolean;
}

export interface PeerNetworkStats {
  connections: number;
  blackholed: number;
  unknownCallers: number;
}

const noop = (): void => undefined;

/**
 * Finds the inode of the caller's end of a proxied connection: the TCP socket from
 * 127.0.0.1:`localPort` to 127.0.0.1:`remotePort`. Sockets in TIME_WAIT (inode 0) and other
 * addresses with the same ports are not it.
 */
function socketInode(localPort: number, remotePort: number): string | undefined {
  const hex = (port: number): string => port.toString(16).toUpperCase().padStart(4, '0');
  const local4 = `0100007F:${hex(localPort)}`;
  const remote4 = `0100007F:${hex(remotePort)}`;
  const local6 = `0000000000000000FFFF00000100007F:${hex(localPort)}`;
  const remote6 = `0000000000000000FFFF00000100007F:${hex(remotePort)}`;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const matches = (f[1] === local4 && f[2] === remote4) || (f[1] === local6 && f[2] === remote6);
      if (matches && f[9] !== '0') return f[9];
    }
  }
  return undefined;
}

/** Which of `pids` holds a descriptor for socket `inode`. */
function pidHoldingSocket(inode: string, pids: Iterable<[string, number]>): string | undefined {
  const target = `socket:[${inode}]`;
  for (const [name, pid] of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === target) return name;
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}

/** The proxies of one cluster and the cuts between its replicas. */
export class PeerNetwork {
  private readonly servers = new Map<string, net.Server>();
  private readonly links = new Set<ProxyLink>();
  private readonly isolated = new Set<string>();
  private readonly pids = new Map<string, number>();
  private readonly stat: PeerNetworkStats = { connections: 0, blackholed: 0, unknownCallers: 0 };
  /** Connections accepted per caller→callee (and the last one's time), for failure reports. */
  private readonly pairs = new Map<string, { count: number; last: number }>();
  private readonly started = Date.now();

  /** Tells the network which process is replica `name` (call again after every restart). */
  setPid(name: string, pid: number | undefined): void {
    if (pid === undefined) this.pids.delete(name);
    else this.pids.set(name, pid);
  }

  stats(): PeerNetworkStats {
    return { ...this.stat };
  }

  /**
   * Starts the proxy for `name` on 127.0.0.1 (port 0: any free port) forwarding to `backendHost`
   * on the same port; resolves with the port. The backend host must have the port free.
   */
  async addProxy(name: string, backendHost: string, port = 0): Promise<number> {
    const server = net.createServer({ pauseOnConnect: true }, (socket) => this.accept(name, backendHost, socket));
    server.on('error', noop);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.servers.set(name, server);
    return (server.address() as net.AddressInfo).port;
  }

  /** Cuts `name` off from every other replica (both directions) until heal(name). */
  isolate(name: string): void {
    this.isolated.add(name);
    for (const link of this.links) if (!link.blackholed && this.blocked(link.from, link.to)) this.blackhole(link);
  }

  /** Undoes isolate(name): cut connections are destroyed so that their senders reconnect. */
  heal(name: string): void {
    this.isolated.delete(name);
    for (const link of [...this.links]) {
      if (link.blackholed && !this.blocked(link.from, link.to)) this.drop(link);
    }
  }

  healAll(): void {
    for (const name of [...this.isolated]) this.heal(name);
  }

  /** The links now open, for a failure report: caller→replica and whether each is cut. */
  describe(): string {
    const links = [...this.links].map((l) => `${l.from ?? '?'}→${l.to} ${l.blackholed ? 'cut' : l.backend ? (l.backend.connecting ? 'connecting' : 'up') : 'identifying'}`);
    const pairs = [...this.pairs].sort().map(([k, v]) => `${k} ${v.count}× (last at ${((v.last - this.started) / 1000).toFixed(1)}s)`);
    return `isolated [${[...this.isolated].join(',')}]; pids ${JSON.stringify(Object.fromEntries(this.pids))}; ${JSON.stringify(this.stat)}; now ${((Date.now() - this.started) / 1000).toFixed(1)}s\n  ${links.length} links: ${links.sort().join(', ')}\n  connections accepted: ${pairs.join(', ')}`;
  }

  isIsolated(name: string): boolean {
    return this.isolated.has(name);
  }

  async close(): Promise<void> {
    for (const link of [...this.links]) this.drop(link);
    await Promise.all([...this.servers.values()].map((s) => new Promise<void>((r) => s.close(() => r()))));
    this.servers.clear();
  }

  private blocked(from: string | undefined, to: string): boolean {
    if (this.isolated.has(to)) return true;
    return from !== undefined && this.isolated.has(from);
  }

  private callerOf(socket: net.Socket): string | undefined {
    const inode = socketInode(socket.remotePort ?? 0, socket.localPort ?? 0);
    return inode === undefined ? undefined : pidHoldingSocket(inode, this.pids.entries());
  }

  private accept(to: string, backendHost: string, client: net.Socket): void {
    this.stat.connections++;
    client.on('error', noop);
    const link: ProxyLink = { from: undefined, to, client, backend: undefined, blackholed: false };
    this.links.add(link);
    client.once('close', () => this.drop(link));
    // The caller's socket is in /proc as soon as it is connected; a few tries cover a caller
    // that is being restarted (its pid not registered yet).
    let tries = 0;
    const identify = (): void => {
      if (!this.links.has(link)) return;
      link.from = this.callerOf(client);
      if (link.from === undefined && ++tries < 5) {
        setTimeout(identify, 20);
        return;
      }
      const pair = `${link.from ?? '?'}→${to}`;
      const p = this.pairs.get(pair) ?? { count: 0, last: 0 };
      this.pairs.set(pair, { count: p.count + 1, last: Date.now() });
      if (link.from === undefined) {
        // Nobody we know (a replica that died meanwhile): refuse, the sender will retry.
        this.stat.unknownCallers++;
        this.drop(link);
        return;
      }
      if (this.blocked(link.from, to)) {
        this.blackhole(link);
        return;
      }
      const backend = net.connect({ host: backendHost, port: client.localPort! });
      link.backend = backend;
      backend.on('error', noop);
      backend.once('close', () => this.drop(link));
      backend.once('connect', () => {
        if (link.blackholed || !this.links.has(link)) return;
        client.pipe(backend);
        backend.pipe(client);
        client.resume();
      });
    };
    identify();
  }

  private blackhole(link: ProxyLink): void {
    link.blackholed = true;
    this.stat.blackholed++;
    link.client.unpipe();
    link.backend?.unpipe();
    link.client.on('data', noop);
    link.client.resume();
    link.backend?.on('data', noop);
  }

  private drop(link: ProxyLink): void {
    if (!this.links.delete(link)) return;
    link.client.destroy();
    link.backend?.destroy();
  }
}
