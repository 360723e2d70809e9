// cmd/clusterd is the API server's entry point: parse flags (bad input: message and exit 2),
// start one replica, print how to reach it, and turn SIGTERM/SIGINT into a graceful shutdown
// that exits 0. Imports: internal/config, internal/server.

import { FlagError, helpText, parseFlags } from '../../internal/config/flags.js';
import { startServer } from '../../internal/server/server.js';

async function main(): Promise<void> {
  let config;
  try {
    config = parseFlags(process.argv.slice(2));
  } catch (e) {
    if (e instanceof FlagError) {
      process.stderr.write(`clusterd: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  if (config === 'help') {
    process.stdout.write(helpText());
    return;
  }
  const server = await startServer(config);
  process.stdout.write(
    `clusterd is serving at ${server.url}\n` +
      `  kubectl --kubeconfig ${server.kubeconfigPath} get namespaces\n` +
      `  (or: export KUBECONFIG=${server.kubeconfigPath})\n`,
  );
  let signals = 0;
  const onSignal = (signal: string) => {
    signals++;
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

main().catch((e: unknown) => {
  process.stderr.write(`clusterd: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
