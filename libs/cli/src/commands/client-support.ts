import { parseArgs } from 'node:util';
import { bootstrapToken, createClient, isArsError } from '@ars/client';
import type { ArsClient } from '@ars/client';
import { clientConfig, useColor } from '../config.ts';
import { EXIT } from '../io.ts';
import type { Io } from '../io.ts';

/** What the client commands share: argument parsing, the connection, error reporting. */

/** A bad command line: printed with the usage hint, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A command that cannot do what it was asked (no such pause token, …): its message printed, exit 1. */
export class CommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandError';
  }
}

/** Prints an ArsError (the contract envelope's code and message), a CommandError or a UsageError; other errors propagate. */
export function reportClientError(io: Io, command: string, error: unknown): number {
  if (error instanceof UsageError) {
    io.stderr(`ars ${command}: ${error.message}\nRun "ars help" for usage.\n`);
    return EXIT.usage;
  }
  if (error instanceof CommandError) {
    io.stderr(`ars ${command}: ${error.message}\n`);
    return EXIT.failure;
  }
  if (isArsError(error)) {
    const status = error.status === 0 ? 'no response' : `HTTP ${error.status}`;
    io.stderr(`ars ${command}: ${error.code} (${status}): ${error.message}\n`);
    return EXIT.failure;
  }
  throw error;
}

/** The gateway and the token of ARS_URL and ARS_TOKEN (a dev bootstrap token when unset). */
export async function connection(io: Io): Promise<{ baseUrl: string; token: string }> {
  const config = clientConfig(io.env);
  return { baseUrl: config.baseUrl, token: config.token ?? (await bootstrapToken(config.baseUrl)) };
}

/** A client of ARS_URL as ARS_TOKEN. */
export async function connect(io: Io): Promise<ArsClient> {
  return createClient(await connection(io));
}

/** Whether the command's output gets colors (a terminal, and no NO_COLOR). */
export function colorOf(io: Io): boolean {
  return useColor(io.env, io.isTty);
}

type OptionSpec = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

/** node:util parseArgs, strict; its errors become UsageErrors. */
export function parse<O extends OptionSpec>(args: readonly string[], options: O) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** JSON from the command line, or a UsageError naming what it was for. */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`the ${what} is not valid JSON: ${text}`);
  }
}

/** A positive integer option, or a UsageError. */
export function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`${name} must be a positive integer`);
  return Number(value);
}

/**
 * Runs `follow` until it settles or Ctrl-C (SIGINT) or SIGTERM aborts the
 * signal it gets; the listeners are removed afterwards.
 */
export async function untilInterrupted<T>(follow: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const stop = (): void => controller.abort(new InterruptedError());
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    return await follow(controller.signal);
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  }
}

/** The reason of a signal aborted by Ctrl-C or SIGTERM. */
export class InterruptedError extends Error {
  constructor() {
    super('interrupted');
    this.name = 'InterruptedError';
  }
}
