// internal/aggregator/upgrade owns connection upgrades (SPDY, WebSocket: `Connection: Upgrade`
// over HTTP/1.1) to extension API servers. Node hands an HTTP/1.1 upgrade request to an
// `upgrade` listener with the raw socket; `acceptUpgrades` runs such requests through the
// normal handler chain (authentication, authorization, routing) with a response bound to that
// socket, so everything that is not proxied is answered as before (then the connection closes).
// `proxyUpgrade` forwards an authorized upgrade to the extension and, on its 101, joins the two
// sockets. HTTP/2 has no upgrades (RFC 8441 extended CONNECT is not served).
// Imports: http/context, aggregator (apiservices, client, proxy headers).

import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context } from 'hono';
import type { Env } from '../http/context.js';
import type { ApiServiceView } from './apiservices.js';
import type { ExtensionClient } from './extension-client.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => unknown;

/** Sockets whose request came through `acceptUpgrades` (the parser let go of them). */
const upgradeResponses = new WeakMap<IncomingMessage, { socket: Duplex; res: ServerResponse }>();

/** Makes `server` pass HTTP/1.1 upgrade requests through `listener` with the raw socket kept. */
export function acceptUpgrades(server: { on(event: 'upgrade', l: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): unknown }, listener: Listener): void {
  server.on('upgrade', (req, socket, head) => {
    if (head.length) socket.unshift(head);
    const res = new ServerResponse(req);
    // The parser no longer reads this socket: one request, then it closes.
    res.shouldKeepAlive = false;
    res.assignSocket(socket as never);
    res.once('finish', () => {
      if (upgradeResponses.has(req)) socket.end();
    });
    socket.on('error', () => socket.destroy());
    upgradeResponses.set(req, { socket, res });
    listener(req, res);
  });
}

/** Whether this request asks for an upgrade the proxy can carry (HTTP/1.1, through acceptUpgrades). */
export function isUpgradeRequest(c: Context<Env>): boolean {
  const incoming = c.env.incoming as IncomingMessage;
  return Boolean(c.req.header('upgrade')) && /\bupgrade\b/i.test(c.req.header('connection') ?? '') && upgradeResponses.has(incoming);
}

function rawHead(statusCode: number, statusMessage: string, rawHeaders: readonly string[]): string {
  let head = `HTTP/1.1 ${statusCode} ${statusMessage}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  return `${head}\r\n`;
}

/**
 * Forwards an upgrade request. On the extension's 101 the client's socket gets the 101 as the
 * extension wrote it and the two sockets are joined; the returned promise resolves to
 * undefined then (nothing more is written through the handler chain). Any other answer is
 * returned for the caller to pass through.
 */
export async function proxyUpgrade(
  c: Context<Env>,
  api: ApiServiceView,
  client: ExtensionClient,
  headers: Record<string, string | string[]>,
): Promise<IncomingMessage | undefined> {
  const incoming = c.env.incoming as IncomingMessage;
  const held = upgradeResponses.get(incoming)!;
  const url = new URL(c.req.url);
  const { request, response } = await client.start(api, {
    method: c.req.method,
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, connection: 'Upgrade', upgrade: c.req.header('upgrade')! },
  });
  const upgraded = new Promise<{ res: IncomingMessage; socket: Duplex; head: Buffer }>((resolve) => request.once('upgrade', (res: IncomingMessage, socket: Duplex, head: Buffer) => resolve({ res, socket, head })));
  request.end();
  const first = await Promise.race([upgraded, response.then((res) => ({ res, socket: undefined, head: undefined }))]);
  if (!first.socket) return first.res;
  const { res, socket: upstream, head } = first;
  const downstream = held.socket;
  // From here the bytes are the protocol's: the handler chain's response writes nowhere.
  upgradeResponses.delete(incoming);
  held.res.detachSocket(downstream as never);
  downstream.write(rawHead(res.statusCode ?? 101, res.statusMessage ?? 'Switching Protocols', res.rawHeaders));
  if (head.length) downstream.write(head);
  upstream.pipe(downstream);
  downstream.pipe(upstream);
  const close = () => {
    upstream.destroy();
    downstream.destroy();
  };
  upstream.once('close', close);
  downstream.once('close', close);
  upstream.on('error', close);
  downstream.on('error', close);
  return undefined;
}
