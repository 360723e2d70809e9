// internal/cluster-cli/args owns the operator subcommands' command-line syntax, close to
// kubectl's: --name=value or --name value, short -o json / -o=json / -ojson, repeatable flags,
// positionals anywhere, -- ends the flags. Anything it cannot read is a UsageError, which the
// entry point prints and exits with status 2. Imports: nothing from the project.

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface FlagDef {
  /** One-letter alias, as -o for --output. */
  short?: string;
  /** May be given more than once (values kept in order). */
  repeated?: boolean;
}

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string[]>;
  help: boolean;
}

/** `command` names the subcommand in messages ("clusterd pki"). */
export function parseArgs(argv: readonly string[], defs: Record<string, FlagDef>, command: string): ParsedArgs {
  const byShort = new Map(Object.entries(defs).flatMap(([name, d]) => (d.short ? [[d.short, name] as const] : [])));
  const flags = new Map<string, string[]>();
  const positionals: string[] = [];
  let help = false;
  const set = (name: string, value: string) => {
    const def = defs[name]!;
    const values = flags.get(name) ?? [];
    if (values.length && !def.repeated) throw new UsageError(`--${name} given twice (see ${command} --help)`);
    flags.set(name, [...values, value]);
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    let name: string;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      name = arg.slice(2, eq < 0 ? undefined : eq);
      inline = eq < 0 ? undefined : arg.slice(eq + 1);
      if (!Object.hasOwn(defs, name)) throw new UsageError(`unknown flag: --${name} (see ${command} --help)`);
    } else if (arg.startsWith('-') && arg.length > 1) {
      const long = byShort.get(arg[1]!);
      if (!long) throw new UsageError(`unknown flag: ${arg.slice(0, 2)} (see ${command} --help)`);
      name = long;
      const rest = arg.slice(2);
      inline = rest === '' ? undefined : rest.startsWith('=') ? rest.slice(1) : rest;
    } else {
      positionals.push(arg);
      continue;
    }
    if (inline === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('-') && next.length > 1)) throw new UsageError(`flag needs an argument: --${name}`);
      inline = next;
      i++;
    }
    set(name, inline);
  }
  return { positionals, flags, help };
}

/** The single value of a flag, or undefined. */
export const flag = (args: ParsedArgs, name: string): string | undefined => args.flags.get(name)?.[0];

/** Where a subcommand writes; tests capture it. */
export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}
