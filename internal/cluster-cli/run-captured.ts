// internal/cluster-cli/run-captured is test support: runs one `clusterd <subcommand>` through
// the same dispatcher as the binary, with stdout and stderr captured as text. Imports:
// subcommands (the dispatcher), args (the I/O type).

import type { CommandIo } from './args.js';
import { runSubcommand } from './subcommands.js';

export interface CapturedRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCaptured(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<CapturedRun> {
  let stdout = '';
  let stderr = '';
  const io: CommandIo = { env, out: (t) => void (stdout += t), err: (t) => void (stderr += t) };
  const code = await runSubcommand(argv, io);
  return { code, stdout, stderr };
}
