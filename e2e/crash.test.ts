// Crash safety with real processes: kill -9 in the middle of a stream of creates, restart on
// the same data, and every acknowledged create is there, readable and whole.
import { describe, it, expect } from 'vitest';
import { startServerProcess } from './support/server-process.js';

describe('kill -9 during writes', () => {
  it('loses no acknowledged create and leaves no half-applied command (3 rounds)', async () => {
    let server = await startServerProcess(['--log-level=error']);
    const dataDir = server.dataDir;
    const acknowledged = new Set<string>();
    for (let round = 0; round < 3; round++) {
      let stop = false;
      const writers = Array.from({ length: 16 }, async (_, w) => {
        for (let i = 0; !stop; i++) {
          const name = `r${round}-w${w}-${i}`;
          try {
            const res = await server.admin.post('/api/v1/namespaces/default/configmaps', {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name, labels: { round: String(round) } },
              data: { payload: 'x'.repeat(512), writer: String(w) },
            });
            if (res.status === 200) acknowledged.add(name);
          } catch {
            return; // connection died with the server
          }
        }
      });
      await new Promise((r) => setTimeout(r, 300 + Math.floor(Math.random() * 700)));
      await server.kill();
      stop = true;
      await Promise.all(writers);
      server = await startServerProcess(['--log-level=error'], dataDir);
      const list = await server.admin.get('/api/v1/namespaces/default/configmaps');
      expect(list.status).toBe(200);
      // The writers' objects (every one labelled with its round); the root CA ConfigMap the
      // service-account controller keeps in every namespace is not one of them.
      const items = list.json<{ items: Array<{ metadata: { name: string; uid: string; labels?: Record<string, string> }; data: { payload: string } }> }>().items.filter((i) => i.metadata.labels?.round !== undefined);
      const present = new Set(items.map((i) => i.metadata.name));
      const lost = [...acknowledged].filter((n) => !present.has(n));
      expect(lost, `round ${round}: acknowledged creates lost after kill -9`).toEqual([]);
      for (const item of items) {
        expect(item.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
        expect(item.data.payload).toHaveLength(512);
      }
      expect(acknowledged.size).toBeGreaterThan(round * 10);
    }
    expect(await server.stop()).toBe(0);
  });
});

describe('graceful shutdown', () => {
  it('fails /readyz at once on SIGTERM, keeps serving for the delay, then exits 0', async () => {
    const server = await startServerProcess(['--shutdown-delay-duration=2s', '--log-level=error']);
    expect((await server.admin.get('/readyz')).status).toBe(200);
    server.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    const ready = await server.admin.get('/readyz?verbose');
    expect(ready.status).toBe(500);
    expect(ready.text()).toContain('[-]shutdown failed');
    expect((await server.admin.get('/livez')).status).toBe(200);
    expect((await server.admin.get('/api/v1/namespaces')).status).toBe(200);
    const code = await new Promise<number | null>((resolve) => server.child.once('exit', resolve));
    expect(code).toBe(0);
  });

  it('exits with status 2 and a clear message on a bad flag', async () => {
    await expect(startServerProcess(['--storage=floppy'])).rejects.toThrow(/exited with 2[\s\S]*--storage/);
  });
});
