// Test layout: unit and in-process integration tests live beside the code (`*.test.ts`);
// e2e tests start real server processes and real clients, so they run one file at a time.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['cmd/**/*.test.ts', 'internal/**/*.test.ts', 'raft/**/*.test.ts', 'tools/**/*.test.ts', 'bench/**/*.test.ts'],
          pool: 'forks',
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['e2e/**/*.test.ts'],
          pool: 'forks',
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
