// cmd/clusterd is the API server's entry point: parse flags (bad input: message and exit 2),
// start one replica, print how to reach it, and turn SIGTERM/SIGINT into a graceful shutdown
// that exits 0. When the first argument names an operator subcommand (pki, members), that runs
// instead. The server is imported only to serve, so that subcommands start quickly.
// Imports: internal/config, internal/cluster-cli (subcommands, the data directory check), internal/codecache (its hook),
// internal/heap (releasing the start's memory), internal/jit (tier-up, the tick entries' class),
// internal/server (lazily).

import { FlagError, helpText, parseFlags } from '../../internal/config/flags.js';
import { isSubcommand, runSubcommand, subcommandsHelp } from '../../internal/cluster-cli/subcommands.js';
import { checkDataDir } from '../../internal/cluster-cli/data-dir-check.js';
import { bundleLoaderHook } from '../../internal/codecache/hook.js';
import { idleSampler, lowMemoryCollection, releaseWhenIdle } from '../../internal/heap/release-memory.js';
import { keepTickShape } from '../../internal/jit/tick-shape.js';
import { setServerJitFlags } from '../../internal/jit/tier-up.js';
import type { RunningServer } from '../../internal/server/server.js';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (isSubcommand(argv[0])) {
    // exitCode, not exit(): output piped to another process is written asynchronously.
    process.exitCode = await runSubcommand(argv);
    return;
  }
  let config;
  try {
    config = parseFlags(argv);
  } catch (e) {
    if (e instanceof FlagError) {
      process.stderr.write(`clusterd: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  if (config === 'help') {
    process.stdout.write(helpText() + subcommandsHelp());
    return;
  }
  // Before the server's code is compiled: cheaper optimized compilations (internal/jit).
  setServerJitFlags('start');
  // Before any full collection: keeps process.nextTick fast for the life of the process.
  await keepTickShape();
  // Before anything opens the directory: a replica's data started as a single server (or the
  // reverse, or under another --name) would part from its cluster's.
  try {
    checkDataDir(config);
  } catch (e) {
    if (e instanceof FlagError) {
      process.stderr.write(`clusterd: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  // Built, this runs inside the code-caching loader: the server's chunk may have a cache in
  // the data directory (when the bundle's own directory is read-only).
  const loader = bundleLoaderHook();
  loader?.useDataDir(config.dataDir);
  const { startServer } = await import('../../internal/server/server.js');
  // What the flags name is checked against what the server has only when it starts (the
  // API data): a bad value is still a usage error.
  const server = await startServer(config).catch((e: unknown) => {
    if (e instanceof FlagError) {
      process.stderr.write(`clusterd: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  });
  process.stdout.write(
    `clusterd is serving at ${server.url}\n` +
      `  kubectl --kubeconfig ${server.kubeconfigPath} get namespaces\n` +
      `  (or: export KUBECONFIG=${server.kubeconfigPath})\n` +
      // The one thing a stock-kubectl user of the default naming trips over (issue 17 §6).
      (config.naming === 'cluster'
        ? '  --naming=cluster serves *.cluster.io groups: kubectl get/explain/apply work as is; commands that need an upstream group (kubectl auth can-i, auth whoami) need --naming=kubernetes\n'
        : ''),
  );
  // The code caches are written from what the start compiled, so only once it is ready.
  // Then what the start grew and no longer uses is given back: first the load's garbage and
  // the young generation it grew, one window after readiness (so the requests readiness lets
  // in, the probes and clients polling /readyz among them, are answered before a full
  // collection holds the loop); then, once the work that follows readiness (the garbage
  // collector's graph, the controllers' first passes) is done and the process is idle, what
  // that work grew again. On a loaded machine that work takes seconds of wall time: the first
  // release is what an idle server holds meanwhile.
  let stopReleasing: (() => void) | undefined;
  let stopped = false;
  const schedule = (fn: () => void, ms: number) => {
    const t = setTimeout(fn, ms).unref();
    return () => clearTimeout(t);
  };
  whenReady(server, () => {
    loader?.started();
    // The start's code runs once: optimized sooner, it made the start slower (internal/jit).
    setServerJitFlags('ready');
    if (stopped) return;
    stopReleasing = schedule(() => {
      void lowMemoryCollection().then(() => {
        if (stopped) return;
        stopReleasing = releaseWhenIdle({
          idleSinceLastCall: idleSampler({ maxLoopUtilization: 0.7, maxCpuCores: 0.3 }),
          schedule,
          release: lowMemoryCollection,
          windowMs: 100,
          maxWindows: 600,
        });
      });
    }, 100);
  });
  let signals = 0;
  const onSignal = (signal: string) => {
    signals++;
    stopped = true;
    stopReleasing?.();
    if (signals > 1) {
      process.stderr.write(`clusterd: second ${signal}, exiting now\n`);
      process.exit(1);
    }
    server.shutdown().then(
      () => process.exit(0),
      (e: unknown) => {
        process.stderr.write(`clusterd: shutdown failed: ${e instanceof Error ? e.stack : String(e)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
}

/** Calls `then` once the server's /readyz checks pass (polled: the checks are pull-based). */
function whenReady(server: RunningServer, then: () => void): void {
  const poll = () => {
    void server.health.respond('readyz', undefined, new URLSearchParams()).then((r) => {
      if (r?.status === 200) then();
      else setTimeout(poll, 100).unref();
    });
  };
  poll();
}

main().catch((e: unknown) => {
  process.stderr.write(`clusterd: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
