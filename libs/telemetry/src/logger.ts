import { isSpanContextValid, trace } from '@opentelemetry/api';
import { pino } from 'pino';
import type { DestinationStream, Logger as PinoLogger, LoggerOptions as PinoOptions } from 'pino';

/** The structured logger used everywhere: `log.info({ taskId }, 'run started')`. */
export type Logger = PinoLogger;

/** Log levels accepted by {@link createLogger}. */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface LoggerOptions {
  /** The service (or component) name, stamped on every line as `service`. */
  readonly name: string;
  /** A pino level name; an unknown one throws. @default 'info' */
  readonly level?: LogLevel | (string & {});
  /** Where lines go; @default stdout. Tests pass a stream they read back. */
  readonly destination?: DestinationStream;
}

/** Stamps the active span's ids on a line; nothing outside a span. */
function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (span === undefined) return {};
  const ctx = span.spanContext();
  if (!isSpanContextValid(ctx)) return {};
  return { trace_id: ctx.traceId, span_id: ctx.spanId };
}

/**
 * A pino logger whose every line carries `service` and, inside a span,
 * `trace_id` and `span_id`, so that logs join traces.
 */
export function createLogger(options: LoggerOptions): Logger {
  const config: PinoOptions = {
    level: options.level ?? 'info',
    base: { service: options.name },
    mixin: traceFields,
  };
  return options.destination === undefined ? pino(config) : pino(config, options.destination);
}

/** A logger whose lines are kept in memory, and those lines parsed: for tests that assert what was logged. */
export interface MemoryLogger {
  readonly logger: Logger;
  lines(): Record<string, unknown>[];
}

/** A {@link createLogger} logger writing to memory (level `debug` unless given). */
export function createMemoryLogger(name = 'test', level: LogLevel = 'debug'): MemoryLogger {
  const chunks: string[] = [];
  const destination: DestinationStream = {
    write(chunk: string) {
      chunks.push(chunk);
    },
  };
  const logger = createLogger({ name, level, destination });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { logger, lines };
}
