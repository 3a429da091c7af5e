/**
 * What one service-to-service call costs: `createRpcClient` → nats-server →
 * `serveService` and back, both ends in this process on connections of
 * their own (as the one process's services are), a handler that echoes a
 * small body. Per call: the CPU of this process (both ends: encoding,
 * headers, the reply mux, the socket writes and reads) and of nats-server,
 * with `--concurrency` callers each waiting for its reply before the next.
 * One caller is what a lone run's calls pay (every message a socket write of
 * its own); sixteen is what they pay under load, when a turn's messages
 * share a write.
 *
 *   node bench/rpc.bench.ts [--calls 20000] [--warmup 2000] [--concurrency 1,16] [--payload 200]
 */
import { parseArgs } from 'node:util';
import { connectBus, createRpcClient, ensureInfrastructure, serveService } from '@ars/bus';
import type { VerifiedIdentity } from '@ars/contracts';
import { createLogger } from '@ars/telemetry';
import { startTestNats } from '@ars/testkit';
import { cpuSeconds } from './src/proc-stats.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '20000' },
    warmup: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '1,16' },
    payload: { type: 'string', default: '200' },
  },
});
const CALLS = Number(values.calls);
const WARMUP = Number(values.warmup);
const PAD = 'x'.repeat(Number(values.payload));
const print = (line: string) => process.stdout.write(`${line}\n`);

const logger = createLogger({ name: 'rpc-bench', level: 'silent' });
const identity: VerifiedIdentity = { tenant: 'bench', user: 'caller', session: 'rpc', scopes: [] };
const nats = await startTestNats();
const caller = await connectBus({ servers: nats.url, name: 'rpc-bench-caller' });
const callee = await connectBus({ servers: nats.url, name: 'rpc-bench-callee' });
await ensureInfrastructure(caller, { logger });
const served = await serveService(callee, {
  service: 'bench',
  version: '1.0.0',
  instanceId: 'bench-1',
  logger,
  handlers: { 'bench.echo': (request) => Promise.resolve({ echoed: request.body }) },
});
const rpc = createRpcClient(caller);

/** `calls` calls by `concurrency` callers, each waiting for its reply. */
async function drive(calls: number, concurrency: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        next += 1;
        await rpc.call('bench', 'bench.echo', identity, { n: next, pad: PAD });
      }
    }),
  );
}

try {
  print(`rpc benchmark: ${CALLS} calls after ${WARMUP} warm-up, a ${PAD.length}-character body each`);
  for (const concurrency of values.concurrency.split(',').map(Number)) {
    await drive(WARMUP, concurrency);
    const began = performance.now();
    const cpu = process.cpuUsage();
    const natsBefore = cpuSeconds(nats.pid);
    await drive(CALLS, concurrency);
    const used = process.cpuUsage(cpu);
    const seconds = (performance.now() - began) / 1000;
    const perCallUs = (ms: number): string => ((ms / CALLS) * 1000).toFixed(1);
    print(
      `  ${String(concurrency).padStart(2)} callers: ${(CALLS / seconds).toFixed(0)} calls/s; CPU µs per call: ` +
        `this process ${perCallUs((used.user + used.system) / 1000)}, ` +
        `nats-server ${perCallUs((cpuSeconds(nats.pid) - natsBefore) * 1000)}`,
    );
  }
} finally {
  await served.stop();
  await caller.close();
  await callee.close();
  await nats.stop();
}
