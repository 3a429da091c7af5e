import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { recordImports, SERVICE_NODE_FLAGS, startTestSystem } from '@ars/testkit';
import type { ImportRecorder } from '@ars/testkit';
import { startWatched } from './support/runs.ts';

/**
 * What the processes load: the one process, on the embedded store with
 * scripted agents, neither the MongoDB driver nor the OpenAI SDK (each about
 * a megabyte of modules, 100–160 ms of a start and tens of MB), nor without
 * a collector the OTLP exporters (about 30 ms and 5 MB), each coming with
 * the first use that needs it (docs/decisions.md "Optional drivers and SDKs
 * are imported on first use"); the CLI's client commands none of the
 * system's modules.
 */

/** The OpenTelemetry packages only an OTLP export uses. */
const OTLP_EXPORT_PACKAGES = [
  '@opentelemetry/otlp-exporter-base',
  '@opentelemetry/otlp-transformer',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/exporter-metrics-otlp-http',
];

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const execFileAsync = promisify(execFile);

const recorders: ImportRecorder[] = [];
afterAll(() => {
  for (const recorder of recorders) recorder.dispose();
});

/** Runs node with `args` in the repository, to its end: its exit code and output (a failure is an outcome, not a throw). */
async function runNode(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return execFileAsync(process.execPath, [...args], { cwd: ROOT, timeout: 30_000, env }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }),
  );
}

function recorder(): ImportRecorder {
  const made = recordImports();
  recorders.push(made);
  return made;
}

describe('each process loads only what it runs', () => {
  it('serves a scripted run on the embedded store without importing the MongoDB driver, the OpenAI SDK or the OTLP exporters', async () => {
    const imports = recorder();
    const sys = await startTestSystem({
      mode: 'one-process',
      nodeFlags: [...SERVICE_NODE_FLAGS, ...imports.nodeFlags],
    });
    try {
      const client = sys.client();
      const run = await startWatched(client, { query: '#script tool:echo{"a":1};finish:done' });
      try {
        expect((await run.log.terminal()).type).toBe('task.completed');
      } finally {
        await run.log.close();
      }
    } finally {
      await sys.stop();
    }
    const packages = imports.packages();
    // The recording sees what the process does load…
    expect(packages).toContain('fastify');
    expect(packages).toContain('@nats-io/nats-core');
    expect(packages).toContain('@opentelemetry/sdk-trace-node');
    expect(packages).toContain('@opentelemetry/exporter-prometheus');
    // …and not what it has no use for.
    expect(packages).not.toContain('mongodb');
    expect(packages).not.toContain('openai');
    for (const name of OTLP_EXPORT_PACKAGES) expect(packages).not.toContain(name);
  }, 120_000);

  it("runs the CLI's client commands without loading the system's modules (NATS, OpenTelemetry)", async () => {
    const imports = recorder();
    // Nothing listens on port 1: `ars info` fails to connect, after loading all it needs to try.
    const info = await runNode([...imports.nodeFlags, join(ROOT, 'libs', 'cli', 'src', 'main.ts'), 'info'], {
      ...process.env,
      ARS_URL: 'http://127.0.0.1:1',
      ARS_TOKEN: 'x',
    });
    expect(info.code, info.stderr).toBe(1);
    const packages = imports.packages();
    expect(packages).toContain('zod');
    expect(packages).not.toContain('@nats-io/nats-core');
    expect(packages).not.toContain('@opentelemetry/sdk-trace-node');
  }, 60_000);

  it('imports the MongoDB driver when a store is opened on a MongoDB URL', async () => {
    const imports = recorder();
    const dataDir = await mkdtemp(join(tmpdir(), 'ars-footprint-'));
    try {
      // Nothing listens on port 1: the open fails after the driver was imported to try it.
      const script = [
        `import { openStore } from './libs/store/src/index.ts';`,
        `const mongoUrl = 'mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200';`,
        `await openStore({ mongoUrl, database: 'footprint', dataDir: ${JSON.stringify(dataDir)} }).then(`,
        `  () => { throw new Error('opened a store on a closed port'); },`,
        `  (error) => process.stdout.write(error.name),`,
        `);`,
      ].join('\n');
      const opened = await runNode([...imports.nodeFlags, '--input-type=module', '--eval', script]);
      expect(opened.stdout, opened.stderr).toBe('StoreError');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
    expect(imports.packages()).toContain('mongodb');
  }, 60_000);

  it.each(['http/protobuf', 'http/json'])(
    'imports the OTLP exporters when traces and metrics go to a collector (%s)',
    async (protocol) => {
      const imports = recorder();
      // Nothing listens on port 1: setting up the exports loads them; the process leaves before any export.
      const script = [
        `import { initMetrics, initTelemetry } from './libs/telemetry/src/index.ts';`,
        `const otlpEndpoint = 'http://127.0.0.1:1';`,
        `initTelemetry({ serviceName: 'footprint', otlpEndpoint, otlpProtocol: '${protocol}' });`,
        `initMetrics({ serviceName: 'footprint', otlpEndpoint });`,
        `process.stdout.write('set up', () => process.exit(0));`,
      ].join('\n');
      const ran = await runNode([...imports.nodeFlags, '--input-type=module', '--eval', script]);
      expect(ran.stdout, ran.stderr).toBe('set up');
      const packages = imports.packages();
      expect(packages).toContain('@opentelemetry/exporter-metrics-otlp-http');
      expect(packages).toContain(
        protocol === 'http/json' ? '@opentelemetry/exporter-trace-otlp-http' : '@opentelemetry/otlp-transformer',
      );
    },
    60_000,
  );
});
