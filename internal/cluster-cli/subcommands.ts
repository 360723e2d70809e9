// internal/cluster-cli/subcommands owns dispatching the operator subcommands of the clusterd
// entry point (`clusterd pki`, `clusterd members`, `clusterd token`, `clusterd credential`) and their exit statuses: 2 for a bad command
// line, 1 for any other failure. It loads a command's module only when that command runs, so
// the server, started by the same entry point, never loads them (nor the certificate library
// they reach). Imports: args (statically, the UsageError class only); the commands lazily.

import { UsageError, type CommandIo } from './args.js';

type Command = (argv: readonly string[], io: CommandIo) => Promise<number>;

const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  pki: {
    summary: 'create or complete a multi-replica cluster\'s PKI directory (CAs, certificates, join token)',
    load: async () => (await import('./pki-command.js')).runPkiCommand,
  },
  credential: {
    summary: 'client credential (exec) plugin for kubectl: print an ExecCredential with an OIDC ID token',
    load: async () => (await import('./credential-command.js')).runCredentialCommand,
  },
  members: {
    summary: 'list the cluster\'s replicas, or remove one (members remove NAME)',
    load: async () => (await import('./members-command.js')).runMembersCommand,
  },
  token: {
    summary: 'create, list or revoke the tokens new replicas join the cluster with (token create|list|revoke)',
    load: async () => (await import('./token-command.js')).runTokenCommand,
  },
};

export function isSubcommand(arg: string | undefined): arg is string {
  return arg !== undefined && Object.hasOwn(COMMANDS, arg);
}

/** The subcommands section of `clusterd --help`. */
export function subcommandsHelp(program = 'clusterd'): string {
  const lines = ['', 'Subcommands (each has --help):'];
  for (const [name, c] of Object.entries(COMMANDS)) lines.push(`  ${program} ${name}`, `      ${c.summary[0]!.toUpperCase()}${c.summary.slice(1)}.`);
  return lines.join('\n') + '\n';
}

const processIo: CommandIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
};

/** Runs `argv` ([subcommand, ...args]); resolves with the exit status, never rejects. */
export async function runSubcommand(argv: readonly string[], io: CommandIo = processIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!isSubcommand(name)) {
    io.err(`clusterd: unknown subcommand "${String(name)}"\n`);
    return 2;
  }
  try {
    return await (await COMMANDS[name]!.load())(rest, io);
  } catch (e) {
    io.err(`clusterd ${name}: ${e instanceof Error ? e.message : String(e)}\n`);
    return e instanceof UsageError ? 2 : 1;
  }
}
