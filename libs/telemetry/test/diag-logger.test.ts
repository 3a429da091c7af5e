import { createServer } from 'node:http';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { DiagLogLevel, diag } from '@opentelemetry/api';
import { loggingErrorHandler } from '@opentelemetry/core';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { diagLoggerFor, reportTelemetryProblems, stopReportingTelemetryProblems } from '../src/diag-logger.ts';
import { createMemoryLogger } from '../src/logger.ts';
import { OtlpSpanStreamProcessor } from '../src/otlp-span-stream.ts';

/**
 * OpenTelemetry's own trouble (a failed export, dropped spans) reaches the
 * service's log instead of vanishing, and a collector that stays down is
 * one line per kind per window, not one per batch.
 */

describe('the diag logger', () => {
  it('writes the first of a kind at once, counts the repeats and writes them with the next a window later', () => {
    const memory = createMemoryLogger('svc');
    let now = 1_000;
    const report = diagLoggerFor(memory.logger, { windowMs: 60_000, now: () => now });

    report.error('OTLP export failed', new Error('connect ECONNREFUSED 127.0.0.1:4318'));
    for (let i = 0; i < 5; i += 1) {
      now += 1_000;
      report.error('OTLP export failed', new Error('connect ECONNREFUSED 127.0.0.1:4318'));
    }
    report.warn('OTLP export: 12 spans were dropped');
    now += 60_000;
    report.error('OTLP export failed', new Error('socket hang up'));

    const lines = memory.lines();
    expect(lines.map((l) => [l['level'], l['msg'], l['repeated']])).toEqual([
      [50, 'OTLP export failed', undefined],
      [40, 'OTLP export: 12 spans were dropped', undefined],
      [50, 'OTLP export failed', 5],
    ]);
    expect(lines[0]).toMatchObject({
      service: 'svc',
      component: 'opentelemetry',
      err: { message: expect.stringContaining('ECONNREFUSED') },
    });
    expect(lines[2]).toMatchObject({ err: { message: 'socket hang up' }, window_ms: 60_000 });
  });

  it('leaves info, debug and verbose out, and describes objects that are not errors by their message and code', () => {
    const memory = createMemoryLogger('svc');
    const report = diagLoggerFor(memory.logger);
    report.info('Registered a global for trace');
    report.debug('@opentelemetry/api: Registered a global');
    report.verbose('exporting 3 spans');
    report.warn(
      'metric export timed out',
      { message: 'Request timed out', code: 'ETIMEDOUT', extra: { big: true } },
      7,
    );
    expect(memory.lines()).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'metric export timed out',
        details: [{ message: 'Request timed out', code: 'ETIMEDOUT' }, 7],
      }),
    ]);
  });
});

describe("an exception through the SDK's global error handler", () => {
  it('is logged by its message, with its stack, not as the JSON string the handler makes of it', () => {
    const memory = createMemoryLogger('svc');
    const report = diagLoggerFor(memory.logger);
    const previous = diag.setLogger(report, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
    expect(previous).toBe(true);
    try {
      const failure = new Error('PeriodicExportingMetricReader: metrics export failed (connect ECONNREFUSED)');
      loggingErrorHandler()(failure);
    } finally {
      diag.disable();
    }
    expect(memory.lines()).toEqual([
      expect.objectContaining({
        level: 50,
        component: 'opentelemetry',
        msg: 'PeriodicExportingMetricReader: metrics export failed (connect ECONNREFUSED)',
        err: expect.objectContaining({
          message: 'PeriodicExportingMetricReader: metrics export failed (connect ECONNREFUSED)',
          stack: expect.stringContaining('diag-logger.test.ts'),
        }),
      }),
    ]);
  });

  it('keeps a message that only looks like JSON as it is', () => {
    const memory = createMemoryLogger('svc');
    const report = diagLoggerFor(memory.logger);
    report.error('{"not json');
    report.error('{"stack":"no message here"}');
    expect(memory.lines().map((l) => [l['msg'], l['err']])).toEqual([
      ['{"not json', undefined],
      ['{"stack":"no message here"}', undefined],
    ]);
  });
});

describe('reportTelemetryProblems', () => {
  const closers: (() => unknown)[] = [];
  afterEach(() => {
    for (const close of closers.splice(0)) close();
    stopReportingTelemetryProblems();
  });

  it('logs a span export the collector refused, through the process-wide diag channel', async () => {
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(400, { 'content-type': 'text/plain' }).end('bad request'));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closers.push(() => server.close());
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;

    const memory = createMemoryLogger('gateway');
    expect(reportTelemetryProblems(memory.logger)).toBe(true);
    // The first installer wins: a second service of the same process does not replace it.
    expect(reportTelemetryProblems(createMemoryLogger('other').logger)).toBe(false);

    const processor = new OtlpSpanStreamProcessor({ url: `http://127.0.0.1:${port}/v1/traces` });
    const provider = new BasicTracerProvider({ spanProcessors: [processor] });
    provider.getTracer('t').startSpan('lost').end();
    await processor.forceFlush();
    await expect.poll(() => memory.lines().map((l) => l['msg'])).toContain('OTLP export failed');
    expect(memory.lines()[0]).toMatchObject({ service: 'gateway', level: 50, component: 'opentelemetry' });
    await processor.shutdown();
  });

  it('says nothing once stopped', () => {
    const memory = createMemoryLogger('svc');
    reportTelemetryProblems(memory.logger);
    stopReportingTelemetryProblems();
    diag.error('after the stop');
    expect(memory.lines()).toEqual([]);
  });
});
