// cmd/clusterd-load is the load tool's entry point (`make load`, bin/clusterd-load): parse the
// command line (a bad one: message and exit 2), run the load against the kubeconfigs' targets,
// print the summary as text or JSON. A target that cannot be used is a one-line error and exit
// 1, never a stack trace. SIGINT ends the run early with a summary; a second one exits at once.
// Imports: internal/loadtest, internal/cluster-cli (kubeconfig and usage errors).

import { UsageError } from '../../internal/cluster-cli/args.js';
import { KubeconfigError } from '../../internal/cluster-cli/kubeconfig.js';
import { LoadRun } from '../../internal/loadtest/coordinator.js';
import { HELP, parseLoadArgs } from '../../internal/loadtest/options.js';
import { formatText } from '../../internal/loadtest/summary.js';
import { TargetError, targetsFrom } from '../../internal/loadtest/targets.js';

async function main(): Promise<number> {
  let options;
  try {
    options = parseLoadArgs(process.argv.slice(2), process.env);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`clusterd-load: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  if (options === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  const targets = targetsFrom(options.kubeconfigs, options.context);
  const run = new LoadRun(options, targets, { note: (line) => process.stderr.write(`${line}\n`) });
  let signals = 0;
  process.on('SIGINT', () => {
    if (++signals === 1) {
      process.stderr.write('clusterd-load: interrupted; finishing the requests in flight (SIGINT again to quit now)\n');
      run.interrupt();
    } else {
      run.abort();
      process.exit(130);
    }
  });
  const summary = await run.run();
  process.stdout.write(options.output === 'json' ? `${JSON.stringify(summary, null, 2)}\n` : formatText(summary, options));
  return 0;
}

main().then(
  (code) => {
    // exitCode, not exit(): output piped to another process is written asynchronously.
    process.exitCode = code;
  },
  (e: unknown) => {
    const known = e instanceof KubeconfigError || e instanceof TargetError;
    process.stderr.write(`clusterd-load: ${known ? (e as Error).message : e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  },
);
