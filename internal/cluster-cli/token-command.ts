// internal/cluster-cli/token-command owns `clusterd token create|list|revoke`, the join tokens
// of a multi-replica cluster (kubeadm's `token` commands are the model): reading the command
// line (bad input is a UsageError: exit 2), the kubeconfig, and printing what the join-token API
// answers. Imports: args, kubeconfig, members-command (kubeconfig choice, table layout),
// token-client, config/duration (--ttl), printers/human-duration (the TTL column),
// pki/join-token (token ids).

import { parseDuration } from '../config/duration.js';
import { humanDuration } from '../printers/human-duration.js';
import { parseJoinToken, TOKEN_ID } from '../pki/join-token.js';
import { flag, parseArgs, UsageError, type CommandIo } from './args.js';
import { readKubeconfig } from './kubeconfig.js';
import { formatTable, kubeconfigPath } from './members-command.js';
import { createToken, listTokens, revokeToken, type TokenView } from './token-client.js';

const COMMAND = 'clusterd token';

export function tokenHelp(): string {
  return `Usage:
  ${COMMAND} create [--ttl=24h] [--description=TEXT] [--kubeconfig FILE] [--context NAME]
  ${COMMAND} list [-o json] [--kubeconfig FILE] [--context NAME]
  ${COMMAND} revoke ID [--kubeconfig FILE] [--context NAME]

Join tokens let a new replica join the cluster (clusterd --join URL --token TOKEN). They are
kept by the cluster itself (replicated like any write), so every replica accepts and refuses
the same tokens. The cluster stores only a hash of a token's secret.

  create   Makes a token and prints it: K10<SHA-256 of the cluster CA>::<id>.<secret>. This
           is the only time the secret is shown.
  list     Lists the tokens: ID, TTL (time left; "expired", or <forever>), EXPIRES, DESCRIPTION.
           Never the secrets. The leader removes a token an hour after it expired.
  revoke   Deletes token ID (or the token given in full): joins with it are refused from then.

The join-token file of the cluster PKI (<pki-dir>/join-token) is a token too: the cluster
records it when it first elects a leader, with the default TTL from then; list shows it with
the description "the join-token file of the cluster PKI".

Flags:
  --ttl=DURATION
      How long the token is valid (Go duration: 30m, 24h, 1h30m; whole seconds). 0 means it
      never expires. Default 24h.
  --description=TEXT
      Shown by list: what the token is for.
  --kubeconfig=FILE
      Kubeconfig to use (an administrator's: system:masters, or RBAC on /cluster/v1/tokens).
      Default: $KUBECONFIG, when it names one file.
  --context=NAME
      Kubeconfig context to use instead of its current-context.
  -o, --output=json
      list: {"tokens": [...]} as the server sent them.
  -h, --help
      Print this help and exit.

Exit status: 0 done, 1 failed (kubeconfig unreadable, server unreachable, or the server
refused: its message is printed), 2 bad command line.
`;
}

/** kubeadm's TTL column: time left, <forever> for none; "expired" once past. */
function ttlCell(t: TokenView, now: number): string {
  if (t.expires === null) return '<forever>';
  if (t.expired) return 'expired';
  const left = Date.parse(t.expires) - now;
  return left <= 0 ? 'expired' : humanDuration(left);
}

export function tokensTable(tokens: readonly TokenView[], now: number): string {
  const rows = tokens.map((t) => [t.id, ttlCell(t, now), t.expires ?? '<never>', t.description || '<none>']);
  return formatTable(['ID', 'TTL', 'EXPIRES', 'DESCRIPTION'], rows);
}

/** The id revoke names: a bare id, or a whole created token (as kubeadm's delete takes either). */
function tokenIdOf(arg: string): string {
  if (TOKEN_ID.test(arg)) return arg;
  const bare = /^([a-z0-9]{6})\.[a-z0-9]{16}$/.exec(arg);
  if (bare) return bare[1]!;
  if (arg.startsWith('K10')) {
    try {
      const t = parseJoinToken(arg);
      if (t.id) return t.id;
    } catch {
      // reported below
    }
  }
  throw new UsageError(`invalid token "${arg.length > 12 ? `${arg.slice(0, 6)}…` : arg}": give its ID (6 characters of a-z and 0-9, as list shows it) or the whole token`);
}

export async function runTokenCommand(argv: readonly string[], io: CommandIo, now: () => number = Date.now): Promise<number> {
  const args = parseArgs(argv, { kubeconfig: {}, context: {}, output: { short: 'o' }, ttl: {}, description: {} }, COMMAND);
  if (args.help) {
    io.out(tokenHelp());
    return 0;
  }
  const [verb, ...rest] = args.positionals;
  const only = (allowed: string[]) => {
    for (const f of ['output', 'ttl', 'description']) {
      if (args.flags.has(f) && !allowed.includes(f)) throw new UsageError(`--${f} does not apply to ${verb} (see ${COMMAND} --help)`);
    }
  };
  const creds = () => readKubeconfig(kubeconfigPath(args, io, COMMAND), { context: flag(args, 'context') });
  switch (verb) {
    case 'create': {
      only(['ttl', 'description']);
      if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}": create takes no arguments`);
      const text = flag(args, 'ttl') ?? '24h';
      let ms: number;
      try {
        ms = parseDuration(text);
      } catch (e) {
        throw new UsageError(`--ttl: ${(e as Error).message}`);
      }
      if (ms % 1000 !== 0) throw new UsageError(`--ttl must be whole seconds, got ${text}`);
      const created = await createToken(creds(), { ttlSeconds: ms / 1000, description: flag(args, 'description') ?? '' });
      io.out(`${created.token}\n`);
      return 0;
    }
    case 'list': {
      only(['output']);
      if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}": list takes no arguments`);
      const output = flag(args, 'output');
      if (output !== undefined && output !== 'json') throw new UsageError(`invalid value "${output}" for --output: must be json`);
      const tokens = await listTokens(creds());
      if (output === 'json') io.out(JSON.stringify({ tokens }, null, 4) + '\n');
      else if (tokens.length === 0) io.err('No join tokens found.\n');
      else io.out(tokensTable(tokens, now()));
      return 0;
    }
    case 'revoke': {
      only([]);
      const [arg, ...extra] = rest;
      if (arg === undefined) throw new UsageError(`${COMMAND} revoke needs the ID of the token to revoke`);
      if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}": revoke takes one ID`);
      const id = tokenIdOf(arg);
      const message = await revokeToken(creds(), id);
      io.out(`${message ?? `join token "${id}" revoked`}\n`);
      return 0;
    }
    case undefined:
      throw new UsageError(`${COMMAND} needs a command: create, list or revoke (see ${COMMAND} --help)`);
    default:
      throw new UsageError(`unknown command "${verb}": create, list or revoke (see ${COMMAND} --help)`);
  }
}
