import { z } from 'zod';
import { LOG_FORMATS } from './log-format.ts';
import { NATS_MEMORY_LIMIT_MIB, NATS_MEMORY_LIMIT_MIN_MIB } from './nats-budget.ts';

const NATS_URL = /^(nats|tls):\/\/\S+$/;

function isNatsUrlList(value: string): boolean {
  return value
    .split(',')
    .map((part) => part.trim())
    .every((part) => NATS_URL.test(part) && URL.canParse(part));
}

function isMongoUrl(value: string): boolean {
  return /^mongodb(\+srv)?:\/\/\S+$/.test(value) && URL.canParse(value);
}

/** The log levels the services accept in `LOG_LEVEL`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** When and how often a crashed child is started again. */
export const RestartPolicy = z.object({
  initialDelayMs: z
    .number()
    .int()
    .positive()
    .default(1_000)
    .describe('Delay before the first restart, in ms. Default 1000.'),
  maxDelayMs: z.number().int().positive().default(30_000).describe('Cap of the doubling delay, in ms. Default 30000.'),
  maxConsecutiveCrashes: z
    .number()
    .int()
    .positive()
    .default(5)
    .describe('Crashes in a row after which the child is left down (no crash loop). Default 5.'),
  stableAfterMs: z
    .number()
    .int()
    .positive()
    .default(30_000)
    .describe('A child that ran this long before crashing starts a fresh count. Default 30000.'),
});
export type RestartPolicy = z.infer<typeof RestartPolicy>;

/**
 * Node.js flags of every service process: a young generation of a fixed
 * 2 × 32 MiB. V8 otherwise grows it up to 2 × 64 MiB under load and shrinks
 * it when a process goes quiet, which moved a service's resident memory by
 * 30–60 MiB back and forth under steady load; fixed at 32 MiB it stays flat
 * at no cost in CPU (bench/HISTORY.md, sixth pass). And a memory reducer
 * that collects without shrinking the heap: V8's runs its collections in
 * reduce-footprint mode, which gave back 20–100 MiB of old-generation pages
 * at once (a quiet service every 2–3 minutes, a busy one when its load
 * dipped) only to fault them in again; without it every service held within
 * 2% over five warm minutes (bench/HISTORY.md, ninth pass). `deploy/Dockerfile`
 * passes the same flags (`NODE_HEAP_FLAGS`).
 */
export const SERVICE_NODE_FLAGS: readonly string[] = [
  '--min-semi-space-size=32',
  '--max-semi-space-size=32',
  '--no-memory-reducer-favors-memory',
];

/**
 * Node.js flags of `ars up`'s own process, which hosts every service in the
 * one-process mode: an old generation capped at 384 MiB and a young one of
 * at most 2 × 16 MiB. V8 otherwise sizes its heap from the machine's memory
 * and collects lazily: 599 MiB after 10,000 runs for a live heap of about a
 * tenth of that; with these flags 291 MiB, at 223 against 232 runs/s
 * (bench/HISTORY.md, issue 29). The memory reducer is off as for
 * {@link SERVICE_NODE_FLAGS}. The `ars` wrapper passes exactly these
 * (`cli.test.ts` holds it to them); V8 refuses some of them in NODE_OPTIONS.
 */
export const ARS_NODE_FLAGS: readonly string[] = [
  '--max-old-space-size=384',
  '--max-semi-space-size=16',
  '--no-memory-reducer-favors-memory',
];

/** The data members of {@link StartSystemOptions}, validated by `startSystem`. */
export const SystemOptions = z.object({
  dataDir: z
    .string()
    .min(1)
    .describe("Root of the system's data: stores, the local nats-server's JetStream, the lock."),
  port: z.number().int().min(0).max(65535).describe('Gateway port; 0 picks a free one.'),
  host: z.string().min(1).default('127.0.0.1').describe('Gateway listen address. Default 127.0.0.1.'),
  natsUrl: z
    .string()
    .refine(isNatsUrlList, 'must be a comma-separated list of nats:// or tls:// URLs')
    .optional()
    .describe('Use this NATS; unset spawns a nats-server with its store under dataDir.'),
  natsMemoryLimitMiB: z
    .number()
    .int()
    .min(0)
    .refine(
      (value) => value === 0 || value >= NATS_MEMORY_LIMIT_MIN_MIB,
      `must be 0 (Go's defaults) or at least ${NATS_MEMORY_LIMIT_MIN_MIB}`,
    )
    .default(NATS_MEMORY_LIMIT_MIB)
    .describe(
      `Memory budget of the local nats-server in MiB (GOMEMLIMIT with GOGC=off); 0 leaves Go's defaults. Default ${NATS_MEMORY_LIMIT_MIB}.`,
    ),
  natsMonitorPort: z
    .number()
    .int()
    .min(1)
    .max(65_535)
    .optional()
    .describe(
      "Port of the local nats-server's HTTP monitoring endpoints (/varz, /connz) on 127.0.0.1; unset serves none.",
    ),
  mongoUrl: z
    .string()
    .refine(isMongoUrl, 'must be a mongodb:// or mongodb+srv:// URL')
    .optional()
    .describe('MongoDB for every service; unset uses the embedded store under dataDir.'),
  logLevel: z.enum(LOG_LEVELS).optional().describe('LOG_LEVEL of every child; unset inherits.'),
  env: z.record(z.string(), z.string()).optional().describe('Extra environment of every child.'),
  nodeFlags: z
    .array(z.string().regex(/^--[a-z0-9-]+(=\S+)?$/, 'must be a --flag or --flag=value'))
    .default([...SERVICE_NODE_FLAGS])
    .describe('Node.js flags of every service process. Default: SERVICE_NODE_FLAGS.'),
  rootDir: z
    .string()
    .min(1)
    .optional()
    .describe('Repository root the services are started from. Default: this checkout.'),
  readyTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(60_000)
    .describe('Longest wait for every service to answer. Default 60000.'),
  stopGraceMs: z
    .number()
    .int()
    .positive()
    .default(10_000)
    .describe('SIGTERM to SIGKILL grace per child, in ms. Default 10000.'),
  mode: z
    .enum(['one-process', 'split'])
    .default('split')
    .describe(
      "'one-process': every service and the gateway in one child process (what `ars up` runs in its own process); 'split': one process per service (what a deployment runs, and what tests that kill one service need). Default split.",
    ),
  restart: z
    .union([z.boolean(), RestartPolicy.partial()])
    .default(false)
    .describe('Restart crashed children with backoff (`ars up`); false for tests. Default false.'),
  color: z.boolean().optional().describe('ANSI colors in log lines. Default: when stdout is a terminal.'),
  logFormat: z
    .enum(LOG_FORMATS)
    .default('pretty')
    .describe(
      "'pretty': short readable lines with their trace ids; 'json': the services' JSON lines as they are. Default pretty.",
    ),
});
export type SystemOptions = z.output<typeof SystemOptions>;

/** A log line the supervisor emits, already formatted. */
export interface LogEntry {
  /** The child's name, or `ars` for the supervisor's own lines. */
  readonly source: string;
  readonly stream: 'stdout' | 'stderr';
  /** The formatted, prefixed line (may hold several lines for a stack). */
  readonly text: string;
  /** The line as the child wrote it. */
  readonly raw: string;
}

/** Options of `startSystem`. */
export type StartSystemOptions = z.input<typeof SystemOptions> & {
  /** Receives every log line. @default stdout lines to stdout, stderr lines to stderr */
  readonly onLog?: (entry: LogEntry) => void;
  /** Aborts the startup: everything started so far is stopped and the call rejects. */
  readonly signal?: AbortSignal;
};

/** Options that failed validation; the message names each bad option. */
export class SystemOptionsError extends Error {
  constructor(issues: readonly z.core.$ZodIssue[]) {
    super(
      `invalid startSystem options: ${issues.map((i) => `${i.path.join('.') || '(options)'}: ${i.message}`).join('; ')}`,
    );
    this.name = 'SystemOptionsError';
  }
}

/** Validates and defaults the data members; throws SystemOptionsError. */
export function parseSystemOptions(input: z.input<typeof SystemOptions>): SystemOptions {
  const result = SystemOptions.safeParse(input);
  if (!result.success) throw new SystemOptionsError(result.error.issues);
  return result.data;
}

/** The restart policy in force, or undefined when restarts are off. */
export function restartPolicy(option: SystemOptions['restart']): RestartPolicy | undefined {
  if (option === false) return undefined;
  return RestartPolicy.parse(option === true ? {} : option);
}
