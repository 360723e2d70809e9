// internal/cluster-cli/data-dir-check owns what a data directory says about the flags it may
// be started with, checked before the server opens anything: a replica's directory (it holds a
// Raft log) started without the cluster flags would serve as a single server and take writes
// its cluster never sees; a single server's store started as a replica would serve objects the
// other replicas do not hold; a replica's directory started under another --name would vote
// and append as a member it is not. Each is refused as a usage error (exit 2) with what to do.
// The replica's name is recorded in the directory at its first start as a replica
// (<data-dir>/replica-name); a directory of an earlier build records it at its next start.
// Imports: config (FlagError, ServerConfig).

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FlagError, type ServerConfig } from '../config/flags.js';

export const REPLICA_NAME_FILE = 'replica-name';
/**
 * Written at a replica's join (internal/cluster/join.ts JOINED_FILE, not imported: that module
 * loads the certificate library, a second's start-up for a usage error).
 */
export const JOINED_PEERS_FILE = 'cluster-peers.json';

type DataDirFlags = Pick<ServerConfig, 'dataDir' | 'storage' | 'name' | 'initialCluster' | 'join'>;

/** Throws a FlagError when the data directory belongs to another kind of start; records the replica's name. */
export function checkDataDir(config: DataDirFlags): void {
  if (config.storage !== 'leveldb') return;
  const dir = config.dataDir;
  const clustered = config.initialCluster.length > 0 || config.join !== undefined;
  const hasLog = existsSync(join(dir, 'raft'));
  const nameFile = join(dir, REPLICA_NAME_FILE);
  const recorded = existsSync(nameFile) ? readFileSync(nameFile, 'utf8').trim() : undefined;
  if (!clustered) {
    if (hasLog) {
      // A joined replica never had --pki-dir or --initial-cluster: it restarts with its --join
      // command line (the token is not checked again).
      const joined = existsSync(join(dir, JOINED_PEERS_FILE));
      const flags = joined ? '--join with a member\'s API address, --token and --peer-address' : '--pki-dir, and --initial-cluster or --join';
      throw new FlagError(
        `--data-dir ${dir} holds the Raft log of cluster replica${recorded ? ` "${recorded}"` : ''} (${join(dir, 'raft')}): start it with the flags of its first start ` +
          `(${recorded ? `--name=${recorded}, ` : '--name, '}${flags}); without them it would serve as a single server and its data would part from the cluster's`,
      );
    }
    return;
  }
  if (!hasLog && existsSync(join(dir, 'store'))) {
    throw new FlagError(
      `--data-dir ${dir} holds a store and no Raft log (a single server's, or a replica's whose log was removed): a replica starts on an empty data directory (it receives the cluster's data from the log or a snapshot) or on its own from an earlier start; choose another --data-dir`,
    );
  }
  if (recorded !== undefined && recorded !== config.name) {
    throw new FlagError(`--data-dir ${dir} holds the data of replica "${recorded}", not of --name=${config.name}: start it as --name=${recorded}, or give replica "${config.name}" its own data directory`);
  }
  if (recorded === undefined) {
    mkdirSync(dir, { recursive: true });
    // 'wx': two processes started on one directory at once record one name; the loser is
    // refused by the store's lock.
    try {
      writeFileSync(nameFile, `${config.name}\n`, { flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}
