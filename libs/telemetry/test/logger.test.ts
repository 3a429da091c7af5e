import { describe, expect, it } from 'vitest';
import { createLogger, createMemoryLogger, initTelemetry, withSpan } from '../src/index.ts';

describe('createLogger', () => {
  initTelemetry({ serviceName: 'logger-test' });

  it('stamps trace_id and span_id of the active span on a line', async () => {
    const out = createMemoryLogger('svc', 'info');
    const log = out.logger;
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
    const out = createMemoryLogger('svc', 'info');
    out.logger.info('idle');
    const [line] = out.lines();
    expect(line).not.toHaveProperty('trace_id');
    expect(line).toMatchObject({ service: 'svc', level: 30 });
  });

  it('defaults to level info', () => {
    const written: string[] = [];
    const log = createLogger({ name: 'svc', destination: { write: (line: string) => void written.push(line) } });
    log.debug('hidden');
    expect(log.level).toBe('info');
    expect(written).toHaveLength(0);
  });

  it('keeps the lines of a memory logger parsed, at the level asked', () => {
    const out = createMemoryLogger('svc', 'warn');
    out.logger.info('below the level');
    out.logger.warn({ code: 'unavailable' }, 'kept');
    expect(out.lines()).toEqual([
      expect.objectContaining({ service: 'svc', level: 40, code: 'unavailable', msg: 'kept' }),
    ]);
  });
});
