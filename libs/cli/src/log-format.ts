import { SERVICE_NAMES } from '@ars/contracts';

/**
 * Turns the pino JSON lines of the services into short readable lines
 * (`pretty`): `[session]        info  service started instanceId=session-1a2b
 * trace_id=4bf9…`, or passes them through as they are (`json`, for a log
 * shipper or `jq`).
 */

/** The formats of `ars up --log-format`. */
export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

const ANSI = {
  reset: '\x1b[0m',
  dim: '\x1b[2m',
  bold: '\x1b[1m',
  red: '\x1b[31m',
  green: '\x1b[32m',
  yellow: '\x1b[33m',
  blue: '\x1b[34m',
  magenta: '\x1b[35m',
  cyan: '\x1b[36m',
  gray: '\x1b[90m',
  brightRed: '\x1b[91m',
  brightGreen: '\x1b[92m',
  brightBlue: '\x1b[94m',
  brightMagenta: '\x1b[95m',
} as const;
type Color = keyof typeof ANSI;

/** pino's numeric levels. */
const LEVEL_NAMES: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};
const LEVEL_COLORS: Record<string, Color> = {
  trace: 'gray',
  debug: 'gray',
  info: 'green',
  warn: 'yellow',
  error: 'red',
  fatal: 'brightRed',
};
const PREFIX_COLORS: readonly Color[] = [
  'cyan',
  'magenta',
  'blue',
  'yellow',
  'green',
  'brightBlue',
  'brightMagenta',
  'brightGreen',
];

/** Members of a pino line that the short form leaves out or shows elsewhere. */
const HIDDEN_KEYS = new Set(['level', 'time', 'pid', 'hostname', 'service', 'name', 'msg', 'trace_id', 'span_id', 'v']);
const TRACE_ID = /^[0-9a-f]{32}$/;

/** Formatting choices shared by every line of a run. */
export interface LogFormatOptions {
  /** ANSI colors; only when the output is a terminal or FORCE_COLOR is set. */
  readonly color: boolean;
  /** Width the `[name]` prefix is padded to, so that columns line up. */
  readonly prefixWidth?: number;
  /** `json`: every line as one JSON object, the services' as they wrote them. @default 'pretty' */
  readonly format?: LogFormat;
}

/** Wraps text in an ANSI color when colors are on. */
export function paint(text: string, color: Color, enabled: boolean): string {
  return enabled ? `${ANSI[color]}${text}${ANSI.reset}` : text;
}

/** A stable color per process name; the services get distinct ones. */
export function colorFor(name: string): Color {
  const known = (SERVICE_NAMES as readonly string[]).indexOf(name);
  if (known !== -1) return PREFIX_COLORS[known % PREFIX_COLORS.length] ?? 'cyan';
  let hash = 0;
  for (const ch of name) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return PREFIX_COLORS[hash % PREFIX_COLORS.length] ?? 'cyan';
}

/** The `[name]` prefix, padded and colored. */
export function formatPrefix(name: string, options: LogFormatOptions): string {
  const tag = `[${name}]`.padEnd((options.prefixWidth ?? 0) + 2);
  return paint(tag, colorFor(name), options.color);
}

/** A parsed pino line: its level name and the readable rest. */
export interface ParsedLogLine {
  readonly level: string;
  readonly text: string;
  /** An error's stack, shown on the following lines for error and fatal. */
  readonly stack?: string;
  /** The line's trace id (`trace_id`), to find the trace in Jaeger or Tempo. */
  readonly traceId?: string;
}

/** Parses a pino JSON line; `undefined` when the line is not one. */
export function parsePinoLine(line: string): ParsedLogLine | undefined {
  if (!line.startsWith('{')) return undefined;
  let record: Record<string, unknown>;
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    record = value as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof record['level'] !== 'number' && typeof record['level'] !== 'string') return undefined;
  const level =
    typeof record['level'] === 'number' ? (LEVEL_NAMES[record['level']] ?? String(record['level'])) : record['level'];
  const msg = typeof record['msg'] === 'string' ? record['msg'] : '';
  const fields: string[] = [];
  let stack: string | undefined;
  for (const [key, value] of Object.entries(record)) {
    if (HIDDEN_KEYS.has(key) || value === undefined) continue;
    if ((key === 'err' || key === 'error') && isErrorLike(value)) {
      fields.push(`${key}=${quote(String(value.message))}`);
      if (typeof value.stack === 'string') stack = value.stack;
      continue;
    }
    fields.push(`${key}=${formatValue(value)}`);
  }
  const text = [msg, ...fields].filter((part) => part !== '').join(' ');
  const traceId = record['trace_id'];
  return {
    level,
    text,
    ...(stack === undefined ? {} : { stack }),
    ...(typeof traceId === 'string' && TRACE_ID.test(traceId) ? { traceId } : {}),
  };
}

/** A line that is not pino JSON (a child's stray output), as a JSON line of the `json` format. */
function jsonLine(name: string, level: string, message: string): string {
  return JSON.stringify({ level: LEVEL_NUMBERS[level] ?? 30, time: Date.now(), service: name, msg: message });
}

const LEVEL_NUMBERS: Record<string, number> = Object.fromEntries(
  Object.entries(LEVEL_NAMES).map(([number, name]) => [name, Number(number)]),
);

/**
 * One readable line (or several, for an error with its stack) for a line a
 * child wrote. Lines that are not pino JSON pass through unchanged.
 */
export function formatChildLine(name: string, line: string, options: LogFormatOptions): string {
  if (options.format === 'json') return parsePinoLine(line) === undefined ? jsonLine(name, 'info', line) : line;
  const prefix = formatPrefix(name, options);
  const parsed = parsePinoLine(line);
  if (!parsed) return `${prefix} ${line}`;
  const levelColor = LEVEL_COLORS[parsed.level] ?? 'reset';
  const levelTag = paint(parsed.level.padEnd(5), levelColor, options.color);
  const trace = parsed.traceId === undefined ? '' : ` ${paint(`trace_id=${parsed.traceId}`, 'dim', options.color)}`;
  const head = `${prefix} ${levelTag} ${parsed.text}${trace}`;
  if (parsed.stack === undefined || (parsed.level !== 'error' && parsed.level !== 'fatal')) return head;
  const stackLines = parsed.stack.split('\n').slice(1);
  return [head, ...stackLines.map((stackLine) => `${prefix} ${paint(stackLine, 'dim', options.color)}`)].join('\n');
}

/** A line of the supervisor itself, under the `[ars]` prefix. */
export function formatSupervisorLine(
  message: string,
  level: 'info' | 'warn' | 'error',
  options: LogFormatOptions,
): string {
  if (options.format === 'json') return jsonLine('ars', level, message);
  const levelTag = paint(level.padEnd(5), LEVEL_COLORS[level] ?? 'reset', options.color);
  return `${paint('[ars]'.padEnd((options.prefixWidth ?? 0) + 2), 'bold', options.color)} ${levelTag} ${message}`;
}

function isErrorLike(value: unknown): value is { message: unknown; stack?: unknown } {
  return typeof value === 'object' && value !== null && 'message' in value;
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return JSON.stringify(value);
}

function quote(value: string): string {
  return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
}
