// internal/cluster-cli/members-command owns `clusterd members` (list the replicas: a table,
// wide table or JSON) and `clusterd members remove NAME`: reading the command line (bad input
// is a UsageError: exit 2), the kubeconfig, and printing what the membership API answers.
// Imports: args, kubeconfig, members-client, cluster/ids (replica name rule; lazily, as it
// loads the certificate library: a second's start-up on a busy machine, for one regexp).

import { delimiter } from 'node:path';
import { flag, parseArgs, UsageError, type CommandIo, type ParsedArgs } from './args.js';
import { readKubeconfig } from './kubeconfig.js';
import { listMembers, removeMember, type Member } from './members-client.js';

const COMMAND = 'clusterd members';
const OUTPUTS = ['json', 'wide'] as const;

export function membersHelp(): string {
  return `Usage:
  ${COMMAND} [--kubeconfig FILE] [--context NAME] [-o json|wide]
  ${COMMAND} remove NAME [--kubeconfig FILE] [--context NAME]

Lists the cluster's replicas (GET /cluster/v1/members), or removes replica NAME from the
cluster (DELETE /cluster/v1/members/NAME), through any replica's API with a kubeconfig's
credentials. The default output is a table:
  NAME  ROLE (leader, follower, learner, candidate)  PEER ADDRESS  API ADDRESS
  TERM (the replica's Raft term)  APPLIED (last applied log index: exact for the leader; for
  another member, the last entry the leader knows it holds)  LAG (entries behind the leader)
  REACHABLE (yes: it answered the leader within an election timeout; no: it did not, so its
  APPLIED and LAG are the leader's last figures for it, not its state; <none>: unknown, when a
  follower answered because no leader could be asked)

Flags:
  --kubeconfig=FILE
      Kubeconfig to use: its context's server URL, certificate-authority(-data) and the user's
      client-certificate(-data) and client-key(-data) (or token). Default: $KUBECONFIG, when
      it names one file.
  --context=NAME
      Kubeconfig context to use instead of its current-context.
  -o, --output=json|wide
      json: {"members": [...]} as the server sent them; wide: the table plus ID (the Raft
      member id) and CONFIG HASH (the hash of the authentication and authorization
      configuration files the replica loaded, "none" without any: a replica whose hash differs
      from the leader's fails its config-hash readyz check).
  -h, --help
      Print this help and exit.

Exit status: 0 done, 1 failed (kubeconfig unreadable, server unreachable, or the server
refused: its message is printed), 2 bad command line.
`;
}

/** Rows padded into columns as kubectl prints them (three spaces between columns). */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('   ').trimEnd();
  return [header, ...rows].map(line).join('\n') + '\n';
}

const cell = (v: unknown): string => (v === undefined || v === null || v === '' ? '<none>' : typeof v === 'object' ? JSON.stringify(v) : String(v));

export function membersTable(members: readonly Member[], wide: boolean): string {
  const header = ['NAME', 'ROLE', 'PEER ADDRESS', 'API ADDRESS', 'TERM', 'APPLIED', 'LAG', 'REACHABLE', ...(wide ? ['ID', 'CONFIG HASH'] : [])];
  const rows = members.map((m) =>
    [m.name, m.role, m.peerAddress, m.apiAddress, m.term, m.applied, m.lag, m.reachable === undefined ? '' : m.reachable ? 'yes' : 'no', ...(wide ? [m.id, m.configHash] : [])].map(cell),
  );
  return formatTable(header, rows);
}

/** The kubeconfig a cluster subcommand uses: --kubeconfig, else $KUBECONFIG when it names one file. */
export function kubeconfigPath(args: ParsedArgs, io: CommandIo, command = COMMAND): string {
  const given = flag(args, 'kubeconfig');
  if (given) return given;
  const env = io.env['KUBECONFIG'];
  if (env && env.includes(delimiter)) throw new UsageError(`KUBECONFIG lists several files; name one with --kubeconfig`);
  if (env) return env;
  throw new UsageError(`--kubeconfig is required (or set KUBECONFIG) (see ${command} --help)`);
}

export async function runMembersCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  const args = parseArgs(argv, { kubeconfig: {}, context: {}, output: { short: 'o' } }, COMMAND);
  if (args.help) {
    io.out(membersHelp());
    return 0;
  }
  const [verb, ...rest] = args.positionals;
  const output = flag(args, 'output');
  if (output !== undefined && !(OUTPUTS as readonly string[]).includes(output)) {
    throw new UsageError(`invalid value "${output}" for --output: must be one of ${OUTPUTS.join(', ')}`);
  }
  if (verb === undefined) {
    const creds = readKubeconfig(kubeconfigPath(args, io), { context: flag(args, 'context') });
    const list = await listMembers(creds);
    if (output === 'json') io.out(JSON.stringify({ members: list.members }, null, 4) + '\n');
    else if (list.members.length === 0) io.err('No members found.\n');
    else io.out(membersTable(list.members, output === 'wide'));
    return 0;
  }
  if (verb !== 'remove') throw new UsageError(`unknown command "${verb}": use "${COMMAND}" to list or "${COMMAND} remove NAME" (see ${COMMAND} --help)`);
  const [name, ...extra] = rest;
  if (name === undefined) throw new UsageError(`${COMMAND} remove needs the NAME of the replica to remove`);
  if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}": remove takes one NAME`);
  const { REPLICA_NAME } = await import('../cluster/ids.js');
  if (!REPLICA_NAME.test(name)) throw new UsageError(`invalid replica name "${name}": lower-case letters, digits and '-', starting and ending with a letter or digit`);
  if (output !== undefined) throw new UsageError('--output applies to listing, not to remove');
  const creds = readKubeconfig(kubeconfigPath(args, io), { context: flag(args, 'context') });
  const message = await removeMember(creds, name);
  io.out(`${message ?? `member "${name}" removed`}\n`);
  return 0;
}
