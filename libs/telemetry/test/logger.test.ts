import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, initTelemetry, withSpan } from '../src/index.ts';

function captured(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { stream, lines };
}

describe('createLogger', () => {
  initTelemetry({ serviceName: 'logger-test' });

  it('stamps trace_id and span_id of the active span on a line', async () => {
    const out = captured();
    const log = createLogger({ name: 'svc', destination: out.stream });
    const ids = await withSpan('work', {}, async (span) => {
      log.info({ taskId: 't1' }, 'run started');
      return span.spanContext();
    });
    const [line] = out.lines();
    expect(line).toMatchObject({
      service: 'svc',
      taskId: 't1',
      msg: 'run started',
      trace_id: ids.traceId,
      span_id: ids.spanId,
    });
  });

  it('writes no trace fields outside a span', () => {
    const out = captured();
    createLogger({ name: 'svc', destination: out.stream }).info('idle');
    const [line] = out.lines();
    expect(line).not.toHaveProperty('trace_id');
    expect(line).toMatchObject({ service: 'svc', level: 30 });
  });

  it('defaults to level info', () => {
    const out = captured();
    const log = createLogger({ name: 'svc', destination: out.stream });
    log.debug('hidden');
    expect(log.level).toBe('info');
    expect(out.lines()).toHaveLength(0);
  });
});
