import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  effectiveUser,
  isIgnored,
  parseDockerignore,
  parseStages,
  runtimeSpecifiers,
  undeclaredRuntimeImports,
} from '../src/index.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const DOCKERFILE = readFileSync(join(ROOT, 'deploy', 'Dockerfile'), 'utf8');
const stages = parseStages(DOCKERFILE);
const runtime = stages.at(-1);
const ignorePath = join(ROOT, '.dockerignore');
const ignored = existsSync(ignorePath) ? parseDockerignore(readFileSync(ignorePath, 'utf8')) : [];
const nodeVersion = /NODE_VERSION="([\d.]+)"/.exec(readFileSync(join(ROOT, 'ars'), 'utf8'))?.[1];
const SERVICES = readdirSync(join(ROOT, 'services'));

function instructions(keyword: string) {
  return (runtime?.instructions ?? []).filter((instruction) => instruction.keyword === keyword);
}

describe('the image (deploy/Dockerfile), read without a Docker daemon', () => {
  it('is built in stages, the last one from a base pinned to the Node version ./ars installs', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) {
      expect(stage.base, 'a tag pinned to a full version, never latest').toMatch(/^[\w./-]+:\d+\.\d+\.\d+[\w.-]*(@sha256:[0-9a-f]{64})?$/);
    }
    expect(runtime?.base).toContain(`node:${nodeVersion}`);
  });

  it('runs as a non-root user', () => {
    expect(runtime).toBeDefined();
    expect(['root', '0', '']).not.toContain(effectiveUser(runtime!));
  });

  it('installs production dependencies only, with the lockfile', () => {
    const installs = stages.flatMap((stage) =>
      stage.instructions.filter((i) => i.keyword === 'RUN' && /pnpm\s+install/.test(i.arguments)),
    );
    expect(installs.length).toBeGreaterThan(0);
    for (const install of installs) {
      expect(install.arguments).toMatch(/--prod\b/);
      expect(install.arguments).not.toMatch(/--prod=false/);
      expect(install.arguments).toMatch(/--frozen-lockfile/);
    }
  });

  it('carries the OCI labels', () => {
    const labels = stages.flatMap((stage) => stage.instructions.filter((i) => i.keyword === 'LABEL')).map((i) => i.arguments).join(' ');
    for (const label of ['title', 'description', 'source', 'version', 'licenses', 'revision']) {
      expect(labels).toContain(`org.opencontainers.image.${label}`);
    }
  });

  it('chooses the service by SERVICE and starts its main.ts', () => {
    expect(instructions('CMD').at(-1)?.arguments ?? instructions('ENTRYPOINT').at(-1)?.arguments).toMatch(
      /services\/\$\{?SERVICE\}?\/src\/main\.ts/,
    );
    expect(instructions('ENV').map((i) => i.arguments).join(' ') + instructions('ARG').map((i) => i.arguments).join(' ')).toMatch(/SERVICE/);
  });

  it('copies only paths that exist in the build context and that .dockerignore keeps', () => {
    for (const stage of stages) {
      for (const copy of stage.instructions.filter((i) => i.keyword === 'COPY' && !i.arguments.includes('--from'))) {
        const sources = copy.arguments.split(/\s+/).filter((part) => !part.startsWith('--')).slice(0, -1);
        for (const source of sources) {
          if (source === '.' || source.includes('*')) continue;
          expect(existsSync(join(ROOT, source)), `COPY ${source} (line ${copy.line})`).toBe(true);
          expect(isIgnored(ignored, source.replace(/^\.\//, '').replace(/\/$/, '')), `COPY ${source}`).toBe(false);
        }
      }
    }
  });
});

describe('the build context (.dockerignore)', () => {
  it('exists', () => {
    expect(existsSync(ignorePath)).toBe(true);
  });

  it.each(['.git', '.toolchain/node/bin/node', 'node_modules/x', 'libs/bus/node_modules/x', '.data/governance/key-encryption.key', 'coverage/x', '.tmp/x', 'server.key', 'deploy/helm/agent-run-service/values.yaml'])(
    'leaves out %s',
    (path) => {
      expect(isIgnored(ignored, path)).toBe(true);
    },
  );

  it.each(['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml', 'services/gateway/src/main.ts', 'libs/bus/src/index.ts', 'proto-contracts/spec/protocol-reference.md'])(
    'keeps %s',
    (path) => {
      expect(isIgnored(ignored, path)).toBe(false);
    },
  );
});

describe('what a production install must satisfy', () => {
  it('every package a service loads at run time is among its importer’s dependencies', async () => {
    const workspace = ['proto-contracts', ...readdirSync(join(ROOT, 'libs')).map((d) => `libs/${d}`), ...SERVICES.map((s) => `services/${s}`)];
    const entries = SERVICES.map((service) => join(ROOT, 'services', service, 'src', 'main.ts'));
    const problems = await undeclaredRuntimeImports(ROOT, entries, workspace.map((dir) => join(ROOT, dir)));
    expect(problems).toEqual([]);
  });

  it('finds imports the way Node loads them, type-only ones left out', () => {
    const source = [
      "import { z } from 'zod';",
      "import type { Bus } from '@ars/bus';",
      "export { x } from './x.ts';",
      "import 'side-effect';",
      "const m = await import('@scope/pkg/sub');",
      "import {\n  a,\n  type B,\n} from 'multi-line';",
    ].join('\n');
    expect(runtimeSpecifiers(source).sort()).toEqual(['./x.ts', '@scope/pkg/sub', 'multi-line', 'side-effect', 'zod']);
  });
});

describe('reading Dockerfiles and ignore files', () => {
  it('joins continued lines and names stages', () => {
    const parsed = parseStages('# c\nFROM node:24.1.0 AS deps\nRUN a \\\n  b\nFROM node:24.1.0\nUSER node\n');
    expect(parsed.map((s) => s.name)).toEqual(['deps', undefined]);
    expect(parsed[0]?.instructions[0]?.arguments).toBe('a b');
    expect(effectiveUser(parsed[1]!)).toBe('node');
    expect(effectiveUser(parsed[0]!)).toBe('root');
  });

  it('matches like Docker: directories, ** and re-inclusion', () => {
    const patterns = ['**/node_modules', '*.log', 'docs', '!docs/keep.md'];
    expect(isIgnored(patterns, 'a/b/node_modules/c')).toBe(true);
    expect(isIgnored(patterns, 'x.log')).toBe(true);
    expect(isIgnored(patterns, 'sub/x.log')).toBe(false);
    expect(isIgnored(patterns, 'docs/other.md')).toBe(true);
    expect(isIgnored(patterns, 'docs/keep.md')).toBe(false);
  });
});
