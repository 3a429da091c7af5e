/**
 * Benchmark (issue 2): authenticated `runtime.info` round trips per second
 * and p50/p99 latency through the real gateway → NATS → discovery path,
 * beside a bare fastify route on the same machine in the same run.
 *
 *   node bench/runtime-info.bench.ts [--duration 10000] [--concurrency 1,16]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startTestSystem } from '@ars/testkit';
import { formatResult, runLoad } from './src/load.ts';
import type { LoadTarget } from './src/load.ts';

const { values } = parseArgs({
  options: { duration: { type: 'string', default: '10000' }, concurrency: { type: 'string', default: '1,16' } },
});
const durationMs = Number(values.duration);
const concurrencies = values.concurrency.split(',').map(Number);

async function startBareFastify(): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./src/bare-fastify.ts', import.meta.url))], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) {
    const match = /^listening (.+)$/.exec(line);
    if (match?.[1]) {
      return {
        url: match[1],
        stop: async () => {
          child.kill('SIGTERM');
          await once(child, 'exit');
        },
      };
    }
  }
  throw new Error('bare fastify did not start');
}

const system = await startTestSystem();
const bare = await startBareFastify();
try {
  const body = JSON.stringify({ identity: {} });
  const targets: LoadTarget[] = [
    {
      label: 'bare fastify route',
      url: `${bare.url}/v1/control/runtime.info`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    },
    {
      label: 'gateway runtime.info (JWT auth)',
      url: `${system.baseUrl}/v1/control/runtime.info`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${system.token}` },
      body,
    },
  ];
  process.stdout.write(`runtime.info benchmark: ${durationMs} ms per run, node ${process.version}\n`);
  for (const concurrency of concurrencies) {
    for (const target of targets) {
      const result = await runLoad(target, { concurrency, durationMs, warmupMs: 2_000 });
      process.stdout.write(formatResult(result, concurrency) + '\n');
    }
  }
} finally {
  await bare.stop();
  await system.stop();
}
