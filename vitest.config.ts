import { defineConfig } from 'vitest/config';

// Three projects: unit (pure, milliseconds), int (real nats-server spawned on
// free ports) and e2e (separate processes over HTTP and SSE). Bounded
// parallelism: the CI machine has two cores.
export default defineConfig({
  test: {
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['proto-contracts/test/**/*.test.ts', 'libs/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts'],
          exclude: ['**/*.int.test.ts', '**/node_modules/**'],
          testTimeout: 10_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'int',
          include: ['libs/*/test/**/*.int.test.ts', 'services/*/test/**/*.int.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test-e2e/**/*.e2e.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
