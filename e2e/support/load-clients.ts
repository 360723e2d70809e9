// e2e/support/load-clients owns starting the cluster e2e tests' load processes
// (load-client-main) and collecting their operation records: the constructor starts them (they
// load while the cluster starts), begin() sets them going once their targets exist, stop()
// closes their stdin and waits until each has reported everything it had in flight. Test-only.

import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { spawnModule } from '../../raft/launch/spawn-module.js';
import type { LoadClientConfig, OpRecord } from './load-protocol.js';

export class LoadClients {
  readonly records: OpRecord[] = [];
  readonly errors: string[] = [];
  private readonly children: { child: ChildProcess; done: Promise<void> }[] = [];

  constructor(configs: LoadClientConfig[]) {
    for (const config of configs) {
      const child = spawnModule(import.meta.url, './load-client-main.ts', { args: [JSON.stringify(config)], stdio: ['pipe', 'pipe', 'pipe'] });
      let finished = false;
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (!line.startsWith('{')) return;
        const r = JSON.parse(line) as OpRecord | { done: true };
        if ('done' in r) finished = true;
        else this.records.push(r);
      });
      createInterface({ input: child.stderr! }).on('line', (line) => this.errors.push(`client ${config.clientId}: ${line}`));
      const done = new Promise<void>((resolve) =>
        child.once('close', (code) => {
          if (!finished || code !== 0) this.errors.push(`client ${config.clientId} exited with ${String(code)} before reporting everything`);
          resolve();
        }),
      );
      this.children.push({ child, done });
    }
  }

  /** Lets the processes begin (they are started by the constructor and wait for this). */
  begin(): void {
    for (const { child } of this.children) child.stdin!.write('go\n');
  }

  /** Writes acknowledged so far. */
  acknowledged(): number {
    return this.records.filter((r) => r.op !== 'get' && r.out === 'ok').length;
  }

  async stop(): Promise<void> {
    for (const { child } of this.children) child.stdin!.end();
    await Promise.all(this.children.map((c) => c.done));
  }

  kill(): void {
    for (const { child } of this.children) if (child.exitCode === null) child.kill('SIGKILL');
  }
}
