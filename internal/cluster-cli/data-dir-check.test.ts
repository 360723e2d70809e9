import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkDataDir, JOINED_PEERS_FILE, REPLICA_NAME_FILE } from './data-dir-check.js';
import { JOINED_FILE } from '../cluster/join.js';
import { FlagError, parseFlags, type ServerConfig } from '../config/flags.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'clusterd-data-dir-check-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const config = (...flags: string[]) => parseFlags([`--data-dir=${dir}`, ...flags]) as ServerConfig;
const REPLICA = ['--name=a', '--initial-cluster=a=127.0.0.1:2380,b=127.0.0.1:2381,c=127.0.0.1:2382'];
const JOINER = ['--name=d', '--join=https://127.0.0.1:6443', '--token=t', '--peer-address=127.0.0.1:2383'];

/** The directory as a start of each kind leaves it. */
const layouts: Record<string, () => void> = {
  empty: () => undefined,
  'a single server': () => mkdirSync(join(dir, 'store'), { recursive: true }),
  'replica a': () => {
    mkdirSync(join(dir, 'raft'), { recursive: true });
    mkdirSync(join(dir, 'store'), { recursive: true });
    writeFileSync(join(dir, REPLICA_NAME_FILE), 'a\n');
  },
  'replica d, joined': () => {
    mkdirSync(join(dir, 'raft'), { recursive: true });
    mkdirSync(join(dir, 'store'), { recursive: true });
    writeFileSync(join(dir, REPLICA_NAME_FILE), 'd\n');
    writeFileSync(join(dir, JOINED_PEERS_FILE), '[]');
  },
  'replica a of an earlier build (no name recorded)': () => {
    mkdirSync(join(dir, 'raft'), { recursive: true });
    mkdirSync(join(dir, 'store'), { recursive: true });
  },
};

describe('checkDataDir', () => {
  it.each([
    ['empty', [], undefined],
    ['empty', REPLICA, undefined],
    ['empty', JOINER, undefined],
    ['a single server', [], undefined],
    ['replica a', ['--storage=memory'], undefined],
    ['a single server', REPLICA, /holds a store and no Raft log \(a single server's/],
    ['a single server', JOINER, /holds a store and no Raft log \(a single server's/],
    ['replica a', REPLICA, undefined],
    ['replica a', [], /holds the Raft log of cluster replica "a" .*start it with the flags of its first start \(--name=a, --pki-dir, and --initial-cluster or --join\)/],
    ['replica a', ['--name=b', '--initial-cluster=a=127.0.0.1:2380,b=127.0.0.1:2381,c=127.0.0.1:2382'], /holds the data of replica "a", not of --name=b/],
    ['replica d, joined', [], /holds the Raft log of cluster replica "d" .*start it with the flags of its first start \(--name=d, --join with a member's API address, --token and --peer-address\)/],
    ['replica d, joined', JOINER, undefined],
    ['replica a of an earlier build (no name recorded)', [], /holds the Raft log of cluster replica \(/],
    ['replica a of an earlier build (no name recorded)', REPLICA, undefined],
  ] as const)('%s, started with %j: %s', (layout, flags, refused) => {
    layouts[layout]!();
    const run = () => checkDataDir(config(...flags));
    if (refused) {
      expect(run).toThrow(FlagError);
      expect(run).toThrow(refused);
    } else {
      expect(run).not.toThrow();
    }
  });

  it('records the replica name at the first start as a replica, and refuses another name from then', () => {
    checkDataDir(config(...REPLICA));
    expect(readFileSync(join(dir, REPLICA_NAME_FILE), 'utf8')).toBe('a\n');
    mkdirSync(join(dir, 'raft'));
    expect(() => checkDataDir(config('--name=b', '--initial-cluster=a=127.0.0.1:2380,b=127.0.0.1:2381'))).toThrow(/holds the data of replica "a"/);
    checkDataDir(config(...REPLICA));
  });

  it('records nothing for a single server', () => {
    checkDataDir(config());
    expect(existsSync(join(dir, REPLICA_NAME_FILE))).toBe(false);
  });

  it('looks for the file a join writes', () => {
    expect(JOINED_PEERS_FILE).toBe(JOINED_FILE);
  });
});
