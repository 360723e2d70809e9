// internal/http/filters/with-metrics owns counting every request and timing it to its
// response (for watches and streamed lists: to their first byte), with the labels upstream
// uses (metrics/request-labels), the requests-in-flight gauge (long-running requests excepted,
// as upstream's max-in-flight filter) and the long-running gauge, which a watch holds until
// its stream closes. It runs right after request info, so refused requests (401, 403, 429)
// count too. Imports: metrics, http/context.

import type { MiddlewareHandler } from 'hono';
import type { ServerMetrics } from '../../metrics/metrics.js';
import { isLongRunning, requestKind, requestLabels } from '../../metrics/request-labels.js';
import type { Env } from '../context.js';
import { afterNext } from './after-next.js';

/** The part of Node's response the filter watches: a long-running request ends when it closes. */
interface Closable {
  once(event: 'close', listener: () => void): unknown;
}

export function withMetrics(metrics: ServerMetrics): MiddlewareHandler<Env> {
  // Not async: the request is counted when the rest of the chain settles, without an async
  // function and its awaits per request.
  return (c, next) => {
    const started = performance.now();
    const info = c.get('info');
    // The content type matters only to tell an apply from other patches.
    const series = metrics.request(requestLabels(info, c.req.method, info.verb === 'patch' ? c.req.header('content-type') : undefined, c.get('query')));
    const longRunning = isLongRunning(info);
    const kind = requestKind(info);
    let endLongRunning: (() => void) | undefined;
    if (longRunning) {
      // A watch answers at once and streams afterwards: it is over when the response closes.
      const gauge = series.longrunning;
      gauge.value++;
      let ended = false;
      endLongRunning = () => {
        if (ended) return;
        ended = true;
        gauge.value--;
      };
      const outgoing = c.env?.outgoing as Closable | undefined;
      if (typeof outgoing?.once === 'function') {
        outgoing.once('close', endLongRunning);
        endLongRunning = undefined;
      }
    } else metrics.inflightStarted(kind);
    const finish = (): void => {
      if (!longRunning) metrics.inflightEnded(kind);
      endLongRunning?.();
      series.done(c.res?.status ?? 500, (performance.now() - started) / 1000);
    };
    return afterNext(next, finish);
  };
}
