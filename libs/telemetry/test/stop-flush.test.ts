import { createServer } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { reportTelemetryProblems, stopReportingTelemetryProblems } from '../src/diag-logger.ts';
import { createMemoryLogger } from '../src/logger.ts';
import { counterFamily, initMetrics, initTelemetry } from '../src/index.ts';
import { flushBeforeStop, STOP_FLUSH_TIMEOUT_MS } from '../src/stop-flush.ts';

/**
 * A stopping process waits for its last OTLP export at most
 * STOP_FLUSH_TIMEOUT_MS: a collector that is down or never answers costs the
 * last interval's telemetry, said once in the log, not a stop held for the
 * exporters' timeouts and retries.
 */

const closers: (() => unknown)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
  stopReportingTelemetryProblems();
});

function reported() {
  const memory = createMemoryLogger('svc');
  reportTelemetryProblems(memory.logger);
  return memory;
}

describe('flushBeforeStop', () => {
  it('returns with the flush, and says nothing', async () => {
    const memory = reported();
    await flushBeforeStop('OTLP trace export', Promise.resolve());
    expect(memory.lines()).toEqual([]);
  });

  it('returns when the flush fails: the exporter reports its own failure', async () => {
    const memory = reported();
    await flushBeforeStop('OTLP trace export', Promise.reject(new Error('connect ECONNREFUSED')));
    expect(memory.lines()).toEqual([]);
  });

  it('returns at the deadline when the flush never settles, and says what was dropped', async () => {
    const memory = reported();
    await flushBeforeStop('OTLP metric export', new Promise(() => undefined), 20);
    expect(memory.lines()).toEqual([
      expect.objectContaining({
        level: 40,
        component: 'opentelemetry',
        msg: 'OTLP metric export: the collector did not take the last export within 20 ms of the stop; it is dropped',
      }),
    ]);
  });
});

describe('a collector that never answers', () => {
  /** Takes every request and answers none (a collector hung, or a black-holed address). */
  async function silentCollector(): Promise<{ url: string; requests: string[] }> {
    const requests: string[] = [];
    const held: IncomingMessage[] = [];
    const server = createServer((request) => {
      requests.push(request.url ?? '');
      held.push(request);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closers.push(() => {
      for (const request of held) request.socket.destroy();
      server.close();
    });
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    return { url: `http://127.0.0.1:${port}`, requests };
  }

  // The tests' own timeouts are the bound: the exporters alone would wait 10 s (traces) and 30 s (metrics).
  it.each(['http/protobuf', 'http/json'] as const)(
    'holds the stop of a service exporting traces (%s) at most the deadline',
    async (protocol) => {
      const memory = reported();
      const collector = await silentCollector();
      const telemetry = initTelemetry({
        serviceName: 'stop-flush',
        otlpEndpoint: collector.url,
        otlpProtocol: protocol,
        sampler: { name: 'always_on' },
      });
      telemetry.tracer.startSpan('last').end();
      await telemetry.shutdown();
      // The export was attempted, and its drop said.
      expect(collector.requests).toEqual(['/v1/traces']);
      // (An earlier test's export, cut off as its collector closed, may report its failure meanwhile.)
      expect(memory.lines().map((l) => String(l['msg']))).toContain(
        `OTLP trace export: the collector did not take the last export within ${STOP_FLUSH_TIMEOUT_MS} ms of the stop; it is dropped`,
      );
    },
    STOP_FLUSH_TIMEOUT_MS + 5_000,
  );

  // The process's meter provider is made by its first initMetrics: this is the file's only one.
  it(
    'holds the stop of the last service exporting metrics at most the deadline',
    async () => {
      const memory = reported();
      const collector = await silentCollector();
      const metrics = initMetrics({ serviceName: 'stop-flush', otlpEndpoint: collector.url });
      counterFamily('test.stop.runs', { description: 'runs', unit: '{run}' }).bind(metrics.service).add(1);
      await metrics.shutdown();
      expect(collector.requests).toEqual(['/v1/metrics']);
      expect(memory.lines().map((l) => String(l['msg']))).toContain(
        `OTLP metric export: the collector did not take the last export within ${STOP_FLUSH_TIMEOUT_MS} ms of the stop; it is dropped`,
      );
    },
    STOP_FLUSH_TIMEOUT_MS + 5_000,
  );
});
