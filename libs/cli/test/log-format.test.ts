import { describe, expect, it } from 'vitest';
import { formatChildLine, parsePinoLine } from '../src/log-format.ts';

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
