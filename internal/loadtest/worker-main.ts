// internal/loadtest/worker-main is the entry point of a load-tool worker process (forked by the
// coordinator with an IPC channel): open the watchers, run the load when told, report progress
// and acknowledgements while it runs, the results after. It exits when the channel closes.
// Imports: loadtest/worker, loadtest/protocol.

import type { FromWorker, ToWorker } from './protocol.js';
import { Worker } from './worker.js';

if (!process.send) throw new Error('worker-main must be started with an IPC channel (child_process.fork)');

const send = (m: FromWorker) => process.send!(m);
const fail = (e: unknown) => send({ type: 'error', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
let worker: Worker | undefined;
let reporter: NodeJS.Timeout | undefined;

function report(): void {
  if (!worker) return;
  const acks = worker.takeAcks();
  if (acks.length) send({ type: 'acks', acks });
  send({ type: 'progress', progress: worker.progress() });
}

process.on('message', (raw) => {
  const m = raw as ToWorker;
  switch (m.type) {
    case 'open':
      worker = new Worker(m.job);
      worker.openWatchers().then((r) => send({ type: 'ready', ...r }), fail);
      return;
    case 'start': {
      const w = worker;
      if (!w) return fail(new Error('start before open'));
      // Acknowledgements go out often (the watch lag needs them before the events are matched);
      // progress with them, which costs one small message.
      reporter = setInterval(report, 100);
      w.run().then((result) => {
        clearInterval(reporter);
        report();
        send({ type: 'loaded', result });
      }, fail);
      return;
    }
    case 'stop':
      worker?.stop();
      return;
    case 'acks':
      worker?.acks(m.acks);
      return;
    case 'finish':
      if (!worker) return fail(new Error('finish before open'));
      worker.finishWatchers(m.perWatcher, m.perWatcherEvents, m.drainMs).then((result) => send({ type: 'watched', result }), fail);
      return;
  }
});
process.on('disconnect', () => process.exit(0));
// The coordinator stops the run on SIGINT; the worker (in the same process group) must not die first.
process.on('SIGINT', () => undefined);
