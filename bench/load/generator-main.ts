// bench/load/generator-main is the entry point of a load-generator process: it runs the jobs
// the bench sends over the IPC channel, one at a time, and answers with their results, so
// load is generated outside the bench's own process (and outside the server's).
// Imports: load/*.

import { runEtcdLoad } from './etcd-load.js';
import { runHttpLoad } from './http-load.js';
import type { FromGenerator, Job, JobResult, ToGenerator } from './protocol.js';
import { NativeWatchFleet } from './native-watch.js';
import { runWriter, WatchFleet } from './watch-load.js';

if (!process.send) throw new Error('generator-main must be started with an IPC channel (child_process.fork)');

const send = (m: FromGenerator) => process.send!(m);
let fleet: WatchFleet | NativeWatchFleet | undefined;

async function run(job: Job): Promise<JobResult | undefined> {
  switch (job.kind) {
    case 'http':
      return runHttpLoad(job);
    case 'etcd':
      return runEtcdLoad(job);
    case 'writer':
      return runWriter(job, (acks) => send({ type: 'acks', acks }));
    case 'watch': {
      fleet = job.client === 'native' ? new NativeWatchFleet(job) : new WatchFleet(job);
      send({ type: 'ready', ...(await fleet.open()) });
      return undefined; // the result comes with `finish`
    }
  }
}

process.on('message', (raw) => {
  const m = raw as ToGenerator;
  const fail = (e: unknown) => send({ type: 'error', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  if (m.type === 'run') {
    run(m.job).then((result) => result && send({ type: 'result', result }), fail);
  } else if (m.type === 'warmup') {
    fleet?.warmUntil(m.untilMs);
  } else if (m.type === 'acks') {
    fleet?.acks(m.acks);
  } else if (m.type === 'finish') {
    if (!fleet) return fail(new Error('finish without a running watch job'));
    fleet.finish(m.expected, m.drainMs).then((result) => send({ type: 'result', result }), fail);
  }
});
process.on('disconnect', () => process.exit(0));
