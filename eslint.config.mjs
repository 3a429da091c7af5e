// One lint setup for the whole workspace. Import boundaries from
// ARCHITECTURE.md are enforced here: services never import each other, libs
// never import services, and only one package may import each driver. No
// module imports itself back through others, `import type` included
// (`ars/no-import-cycle`, libs/cli/src/lint/import-cycles.ts).
import tseslint from 'typescript-eslint';
import { importCyclesPlugin } from './libs/cli/src/lint/import-cycles.ts';

const restrict = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
const driverOwners = [
  { group: ['mongodb', 'mongodb/*'], message: 'Only libs/store imports the MongoDB driver.' },
  { group: ['@nats-io/*'], message: 'Only libs/bus imports @nats-io/*.' },
  { group: ['jose', 'jose/*'], message: 'Only libs/auth imports jose.' },
];
const noDeepImports = { group: ['@ars/*/src/*', '**/libs/*/src/*', '**/proto-contracts/src/*'], message: 'Import packages by name, not by path.' };
const noServices = { group: ['**/services/*', '@ars/gateway', '@ars/run-executor', '@ars/session', '@ars/artifact', '@ars/memory', '@ars/governance', '@ars/agent-registry'], message: 'Services talk over NATS, never by import.' };

export default tseslint.config(
  { ignores: ['**/node_modules/**', '.toolchain/**', '.data/**', 'coverage/**', '.tmp/**', 'deploy/helm/**', 'apps/*/dist/**'] },
  ...tseslint.configs.recommended,
  {
    plugins: { ars: importCyclesPlugin },
    rules: {
      'ars/no-import-cycle': 'error',
      'no-console': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      ...restrict([...driverOwners, noDeepImports, noServices]),
    },
  },
  { files: ['libs/store/**'], rules: restrict([driverOwners[1], driverOwners[2], noDeepImports, noServices]) },
  { files: ['libs/bus/**'], rules: restrict([driverOwners[0], driverOwners[2], noDeepImports, noServices]) },
  { files: ['libs/auth/**'], rules: restrict([driverOwners[0], driverOwners[1], noDeepImports, noServices]) },
  // The one-process composition root runs every service in one process: the one place that imports them.
  { files: ['deploy/src/one-process/**'], rules: restrict([...driverOwners]) },
  // The lint setup loads its own rules from the workspace's source.
  { files: ['eslint.config.mjs'], rules: restrict([...driverOwners, noServices]) },
  {
    // Test files and the CLI talk to people and terminals; tests may reach into their own package's src.
    files: ['**/test/**', 'test-e2e/**', 'bench/**', '**/bench/**', 'libs/cli/**', 'deploy/**'],
    rules: { 'no-console': 'off' },
  },
);
