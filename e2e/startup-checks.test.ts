// End to end: what the built server refuses at start, as an operator meets it — a second
// process on a data directory in use, --runtime-config keys that name no API, a join with no
// token — and that a lock left by a killed process does not block the next start.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, startServerProcess, type ServerProcess } from './support/server-process.js';

const ENTRY = join(PROJECT_ROOT, 'dist', 'cmd', 'clusterd', 'main.js');
const run = (args: string[]) => spawnSync(process.execPath, [ENTRY, '--secure-port=0', '--bind-address=127.0.0.1', ...args], { encoding: 'utf8', timeout: 60_000 });

describe('start-up checks', () => {
  let first: ServerProcess | undefined;
  afterAll(async () => {
    await first?.stop();
  });

  it('a second process on the same data directory says the directory is in use, and leaves the first serving', async () => {
    first = await startServerProcess();
    const second = run([`--data-dir=${first.dataDir}`]);
    expect(second.status).toBe(1);
    expect(second.stderr).toContain(`the data directory ${first.dataDir} is in use by another process`);
    expect((await first.admin.get('/api/v1/namespaces/default')).status).toBe(200);
  });

  it('a process killed with -9 leaves no lock behind', async () => {
    const dataDir = first!.dataDir;
    await first!.kill();
    first = await startServerProcess([], dataDir);
    expect((await first.admin.get('/api/v1/namespaces/default')).status).toBe(200);
  });

  it.each([
    [['--runtime-config=apps/v9'], '"apps/v9"'],
    [['--runtime-config=nosuch.example.com/v1=true'], '"nosuch.example.com/v1"'],
    [['--runtime-config=batch.cluster.io/v1/widgets=false'], '"batch.cluster.io/v1/widgets"'],
    [['--naming=kubernetes', '--runtime-config=batch.cluster.io/v1'], '"batch.cluster.io/v1"'],
  ])('%j is refused as a usage error naming the key', (args, named) => {
    const dataDir = join(first!.dataDir, '..', `${first!.dataDir.split('/').pop()}-rc`);
    const r = run([`--data-dir=${dataDir}`, ...args]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('invalid value for --runtime-config');
    expect(r.stderr).toContain(named);
  });

  it('--join without --token on a data directory that has not joined says what it needs, and contacts no one', () => {
    const dataDir = join(first!.dataDir, '..', `${first!.dataDir.split('/').pop()}-join`);
    // Nothing listens at the --join address: the refusal must come before any contact.
    const r = run([`--data-dir=${dataDir}`, '--name=late', '--join=https://127.0.0.1:9', '--peer-address=127.0.0.1:9']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('--join needs --token to join the cluster');
    expect(r.stderr).toContain(dataDir);
  });
});
