import { DiagLogLevel, ROOT_CONTEXT, context, diag } from '@opentelemetry/api';
import type { DiagLogger } from '@opentelemetry/api';
import type { Logger } from './logger.ts';

/**
 * OpenTelemetry reports its own trouble (an OTLP export that failed, spans
 * dropped because the collector cannot keep up, a metric export that timed
 * out) through its `diag` channel, which says nothing unless a logger is
 * installed: an unreachable collector would lose every span in silence.
 * This routes the channel's warnings and errors to the service's log, and
 * keeps a collector that stays down from flooding it: the first line of a
 * kind is written at once, the repeats are counted and written as one line
 * (`repeated: n`) when the next of that kind comes a window later.
 */

/** How long repeats of one message are counted before the next is written. */
export const DIAG_REPEAT_WINDOW_MS = 60_000;

/** Messages told apart by their first characters: the rest is often a count or an address. */
const KEY_LENGTH = 60;

/** At most this many kinds are remembered; the oldest is forgotten first. */
const MAX_KINDS = 100;

interface Kind {
  lastWrittenAt: number;
  repeated: number;
}

export interface DiagReportOptions {
  /** @default {@link DIAG_REPEAT_WINDOW_MS} */
  readonly windowMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

/** A `diag` logger writing warnings and errors to `logger`, repeats folded per window. */
export function diagLoggerFor(logger: Logger, options: DiagReportOptions = {}): DiagLogger {
  const windowMs = options.windowMs ?? DIAG_REPEAT_WINDOW_MS;
  const now = options.now ?? Date.now;
  const kinds = new Map<string, Kind>();

  function write(level: 'warn' | 'error', text: string, args: unknown[]): void {
    const flattened = flattenedError(text);
    const message = flattened?.message ?? text;
    const key = `${level} ${message.slice(0, KEY_LENGTH)}`;
    const at = now();
    const kind = kinds.get(key);
    if (kind !== undefined && at - kind.lastWrittenAt < windowMs) {
      kind.repeated += 1;
      return;
    }
    const repeated = kind?.repeated ?? 0;
    kinds.delete(key);
    if (kinds.size >= MAX_KINDS) kinds.delete(kinds.keys().next().value as string);
    kinds.set(key, { lastWrittenAt: at, repeated: 0 });
    const error = flattened ?? args.find((a) => a instanceof Error);
    const details = args.filter((a) => a !== error).map(describe);
    // Outside any span: an export runs in the context of whatever span ended last, which it is not part of.
    context.with(ROOT_CONTEXT, () =>
      logger[level](
        {
          component: 'opentelemetry',
          ...(error === undefined ? {} : { err: error }),
          ...(details.length === 0 ? {} : { details }),
          ...(repeated === 0 ? {} : { repeated, window_ms: windowMs }),
        },
        message,
      ),
    );
  }

  return {
    error: (message, ...args) => write('error', message, args),
    warn: (message, ...args) => write('warn', message, args),
    info: () => undefined,
    debug: () => undefined,
    verbose: () => undefined,
  };
}

/**
 * An exception as the SDK's global error handler writes it (`loggingErrorHandler`: its properties as one JSON
 * string, the stack first), as an error again, so that the log line says its message rather than a JSON dump.
 */
function flattenedError(text: string): Error | undefined {
  if (!text.startsWith('{"')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { message, name, stack } = parsed as Record<string, unknown>;
  if (typeof message !== 'string') return undefined;
  const error = new Error(message);
  error.name = typeof name === 'string' ? name : 'Error';
  if (typeof stack === 'string') error.stack = stack;
  return error;
}

function describe(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  // An export result or an HTTP error object: its message and code say what went wrong.
  const record = value as Record<string, unknown>;
  const message = record['message'] ?? record['error'];
  return message === undefined ? String(value) : { message: String(message), code: record['code'] };
}

let installed = false;

/**
 * Installs {@link diagLoggerFor} as the process's `diag` logger at level
 * warn. The first call wins: in the one process every service would
 * install its own, and one report per problem is what an operator wants.
 * Returns whether this call installed it.
 */
export function reportTelemetryProblems(logger: Logger, options: DiagReportOptions = {}): boolean {
  if (installed) return false;
  installed = diag.setLogger(diagLoggerFor(logger, options), {
    logLevel: DiagLogLevel.WARN,
    suppressOverrideMessage: true,
  });
  return installed;
}

/** Removes the installed logger (tests). */
export function stopReportingTelemetryProblems(): void {
  diag.disable();
  installed = false;
}
