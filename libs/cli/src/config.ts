import { z } from 'zod';
import { NATS_MEMORY_LIMIT_MIB, NATS_MEMORY_LIMIT_MIN_MIB } from './nats-budget.ts';

/**
 * The CLI's environment. `main.ts` reads `process.env` once and hands the
 * snapshot to the commands; nothing else reads it.
 */
export type Environment = Readonly<Record<string, string | undefined>>;

/** An empty variable counts as unset. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

const NATS_URL = /^(nats|tls):\/\/\S+$/;

/** The environment of `ars up`. */
export const UpConfig = z.object({
  PORT: optional(
    z
      .string()
      .regex(/^\d+$/, 'must be an integer between 0 and 65535')
      .transform(Number)
      .pipe(
        z
          .number()
          .int()
          .min(0, 'must be an integer between 0 and 65535')
          .max(65535, 'must be an integer between 0 and 65535'),
      ),
  )
    .transform((value) => value ?? 8080)
    .describe('Gateway port, 0–65535 (0 picks a free one). Default 8080.'),
  HOST: optional(z.string().trim().min(1))
    .transform((value) => value ?? '127.0.0.1')
    .describe('Gateway listen address. Default 127.0.0.1.'),
  DATA_DIR: optional(z.string().min(1))
    .transform((value) => value ?? '.data')
    .describe('Root of local data (embedded stores, the local nats-server store). Default .data.'),
  NATS_URL: optional(
    z
      .string()
      .refine(
        (value) => value.split(',').every((part) => NATS_URL.test(part.trim()) && URL.canParse(part.trim())),
        'must be a comma-separated list of nats:// or tls:// URLs',
      ),
  ).describe('Use this NATS; unset spawns a nats-server with its store under DATA_DIR.'),
  NATS_MEMORY_LIMIT_MIB: optional(
    z
      .string()
      .regex(/^\d+$/, 'must be a whole number of MiB')
      .transform(Number)
      .pipe(
        z
          .number()
          .int()
          .refine(
            (value) => value === 0 || value >= NATS_MEMORY_LIMIT_MIN_MIB,
            `must be 0 (Go's defaults) or at least ${NATS_MEMORY_LIMIT_MIN_MIB}`,
          ),
      ),
  )
    .transform((value) => value ?? NATS_MEMORY_LIMIT_MIB)
    .describe(
      `Memory budget of the local nats-server in MiB (GOMEMLIMIT, GOGC=off); 0 leaves Go's defaults. Default ${NATS_MEMORY_LIMIT_MIB}.`,
    ),
  MONGO_URL: optional(
    z
      .string()
      .refine(
        (value) => /^mongodb(\+srv)?:\/\/\S+$/.test(value) && URL.canParse(value),
        'must be a mongodb:// or mongodb+srv:// URL',
      ),
  ).describe('MongoDB for every service; unset uses the embedded store under DATA_DIR.'),
  ARS_UP_MODE: optional(z.enum(['one-process', 'split']))
    .transform((value) => value ?? 'one-process')
    .describe(
      'one-process (every service and the gateway in one Node process) or split (one process per service, as deployed; `ars up --split`). Default one-process.',
    ),
  // Read here to fail early with the CLI's message; the services inherit the variable.
  STORE_ENGINE: optional(z.enum(['nedb', 'sqlite'])).describe(
    'Engine of the embedded store: sqlite or nedb (see docs/operations.md). Default sqlite.',
  ),
  STORE_LOCKING: optional(z.enum(['shared', 'exclusive'])).describe(
    'The sqlite store held by its process alone (exclusive) or open to other processes (shared). Default exclusive in one-process mode, shared in split mode.',
  ),
});
export type UpConfig = z.output<typeof UpConfig>;

/** A bad environment: one line per variable. */
export class ConfigError extends Error {
  readonly problems: readonly { readonly variable: string; readonly message: string }[];
  constructor(problems: readonly { readonly variable: string; readonly message: string }[]) {
    super(problems.map((p) => `${p.variable}: ${p.message}`).join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Parses the `ars up` environment; throws ConfigError naming every bad variable with its value. */
export function parseUpConfig(env: Environment): UpConfig {
  const result = UpConfig.safeParse(env);
  if (result.success) return result.data;
  const seen = new Set<string>();
  const problems: { variable: string; message: string }[] = [];
  for (const issue of result.error.issues) {
    const variable = String(issue.path[0] ?? '(environment)');
    if (seen.has(variable)) continue;
    seen.add(variable);
    problems.push({ variable, message: `${issue.message} (got ${JSON.stringify(env[variable])})` });
  }
  throw new ConfigError(problems);
}

/** Where the client commands go and as whom. */
export interface ClientConfig {
  /** ARS_URL. @default http://127.0.0.1:8080 */
  readonly baseUrl: string;
  /** ARS_TOKEN; unset means a dev bootstrap token. */
  readonly token: string | undefined;
}

/** Reads ARS_URL and ARS_TOKEN. */
export function clientConfig(env: Environment): ClientConfig {
  return { baseUrl: env['ARS_URL'] || 'http://127.0.0.1:8080', token: env['ARS_TOKEN'] || undefined };
}

/**
 * Colors when stdout is a terminal or FORCE_COLOR asks for them
 * (`FORCE_COLOR=0` and NO_COLOR turn them off).
 */
export function useColor(env: Environment, isTty: boolean): boolean {
  const force = env['FORCE_COLOR'];
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  if (env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '') return false;
  return isTty;
}
