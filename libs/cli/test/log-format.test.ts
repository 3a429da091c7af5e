import { describe, expect, it } from 'vitest';
import { formatChildLine, formatSupervisorLine, parsePinoLine } from '../src/log-format.ts';

const PLAIN = { color: false };

function pino(record: Record<string, unknown>): string {
  return JSON.stringify({ level: 30, time: 1700000000000, pid: 42, hostname: 'box', service: 'session', ...record });
}

describe('formatChildLine', () => {
  it('turns a pino line into prefix, level, message and fields', () => {
    const line = pino({ msg: 'service started', instanceId: 'session-1a2b', trace_id: 'abc' });
    expect(formatChildLine('session', line, PLAIN)).toBe('[session] info  service started instanceId=session-1a2b');
  });

  it('pads the prefix so that columns line up', () => {
    expect(formatChildLine('memory', pino({ msg: 'x' }), { color: false, prefixWidth: 14 })).toBe(
      `${'[memory]'.padEnd(16)} info  x`,
    );
  });

  it('passes a line that is not pino JSON through unchanged', () => {
    expect(formatChildLine('gateway', 'plain text {not json', PLAIN)).toBe('[gateway] plain text {not json');
  });

  it('quotes string fields with spaces and shows objects as JSON', () => {
    const line = pino({ level: 40, msg: 'slow', reason: 'two words', detail: { a: 1 } });
    expect(formatChildLine('memory', line, PLAIN)).toBe('[memory] warn  slow reason="two words" detail={"a":1}');
  });

  it('shows an error message inline and its stack below at error level', () => {
    const line = pino({
      level: 50,
      msg: 'failed',
      err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (x.ts:1:1)' },
    });
    expect(formatChildLine('artifact', line, PLAIN).split('\n')).toEqual([
      '[artifact] error failed err=boom',
      '[artifact]     at f (x.ts:1:1)',
    ]);
  });

  it('adds ANSI colors only when asked', () => {
    expect(formatChildLine('session', pino({ msg: 'x' }), PLAIN)).not.toContain('\x1b[');
    expect(formatChildLine('session', pino({ msg: 'x' }), { color: true })).toContain('\x1b[');
  });
});

describe('parsePinoLine', () => {
  it('refuses JSON that is not a log record', () => {
    expect(parsePinoLine('{"a":1}')).toBeUndefined();
    expect(parsePinoLine('[1,2]')).toBeUndefined();
  });
});

describe('trace ids in the pretty format', () => {
  const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

  it('ends a line logged inside a trace with its trace_id, and hides span_id', () => {
    const line = pino({ msg: 'run started', taskId: 't1', trace_id: TRACE, span_id: '00f067aa0ba902b7' });
    expect(formatChildLine('run-executor', line, PLAIN)).toBe(
      `[run-executor] info  run started taskId=t1 trace_id=${TRACE}`,
    );
  });

  it('dims the trace id when colors are on', () => {
    const line = pino({ msg: 'x', trace_id: TRACE });
    expect(formatChildLine('session', line, { color: true })).toContain(`\x1b[2mtrace_id=${TRACE}\x1b[0m`);
  });

  it('shows no trace_id for a line outside a trace or with a malformed one', () => {
    expect(formatChildLine('session', pino({ msg: 'x' }), PLAIN)).toBe('[session] info  x');
    expect(formatChildLine('session', pino({ msg: 'x', trace_id: 'abc' }), PLAIN)).toBe('[session] info  x');
  });
});

describe('the json format', () => {
  const JSON_FORMAT = { color: true, format: 'json' } as const;

  it("passes a service's pino line through byte for byte, without prefix or colors", () => {
    const line = pino({ msg: 'run started', trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' });
    expect(formatChildLine('run-executor', line, JSON_FORMAT)).toBe(line);
  });

  it('wraps a line that is not JSON into a JSON record naming its process', () => {
    const record = JSON.parse(formatChildLine('gateway', 'plain text', JSON_FORMAT)) as Record<string, unknown>;
    expect(record).toMatchObject({ level: 30, service: 'gateway', msg: 'plain text' });
  });

  it("writes the supervisor's own lines as JSON records of service ars", () => {
    const record = JSON.parse(formatSupervisorLine('nats-server restarted', 'warn', JSON_FORMAT)) as Record<
      string,
      unknown
    >;
    expect(record).toMatchObject({ level: 40, service: 'ars', msg: 'nats-server restarted' });
    expect(typeof record.time).toBe('number');
  });
});
