import { parseArgs } from 'node:util';
import { bootstrapToken, createClient, isArsError, isControlEvent } from '@ars/client';
import type { BootstrapRequest } from '@ars/client';
import { clientConfig } from '../config.ts';
import { EXIT } from '../io.ts';
import type { Io } from '../io.ts';

/** A bad command line: printed with the usage hint, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** `ars token [json]`: mints a dev token (body: tenant, user, session, scopes) and prints it. */
export async function tokenCommand(io: Io, args: readonly string[]): Promise<number> {
  const { positionals } = parse(args, {});
  if (positionals.length > 1) throw new UsageError('token takes at most one JSON argument');
  const body = positionals[0] === undefined ? {} : (parseJson(positionals[0], 'token body') as BootstrapRequest);
  io.stdout(`${await bootstrapToken(clientConfig(io.env).baseUrl, body)}\n`);
  return EXIT.ok;
}

/** `ars call <method> [json] [--session id]`: calls a method and prints the JSON answer. */
export async function callCommand(io: Io, args: readonly string[]): Promise<number> {
  const { values, positionals } = parse(args, { session: { type: 'string' } });
  const [method, json, ...extra] = positionals;
  if (method === undefined) throw new UsageError('call needs a method name, e.g. ars call runtime.info');
  if (extra.length > 0) throw new UsageError('call takes a method and at most one JSON argument');
  const body = withIdentity(json === undefined ? {} : parseJson(json, 'request body'));
  const client = createClient(await connection(io));
  const answer = await client.call(method, body, values.session === undefined ? {} : { session: values.session });
  io.stdout(`${JSON.stringify(answer, null, 2)}\n`);
  return EXIT.ok;
}

/** `ars info`: `runtime.info`. */
export function infoCommand(io: Io, args: readonly string[]): Promise<number> {
  if (args.length > 0) throw new UsageError('info takes no arguments');
  return callCommand(io, ['runtime.info']);
}

/**
 * `ars events [--run id] [--type t]… [--admin] [--from seq] [--session id] [--control]`:
 * prints each event frame as one JSON line until Ctrl-C (exit 0).
 */
export async function eventsCommand(io: Io, args: readonly string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    run: { type: 'string' },
    type: { type: 'string', multiple: true },
    admin: { type: 'boolean' },
    from: { type: 'string' },
    session: { type: 'string' },
    control: { type: 'boolean' },
  });
  if (positionals.length > 0) throw new UsageError(`events takes options only, not "${positionals[0]}"`);
  if (values.from !== undefined && !/^\d+$/.test(values.from))
    throw new UsageError('--from must be an event sequence number');
  const client = createClient(await connection(io));
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const stream = client.subscribe({
      signal: controller.signal,
      includeControlEvents: values.control === true,
      ...(values.run === undefined ? {} : { run: values.run }),
      ...(values.type === undefined ? {} : { types: values.type }),
      ...(values.admin === true ? { admin: true } : {}),
      ...(values.from === undefined ? {} : { lastEventId: values.from }),
      ...(values.session === undefined ? {} : { session: values.session }),
    });
    for await (const item of stream) {
      io.stdout(`${JSON.stringify(isControlEvent(item) ? { control: item.control, data: item.data } : item)}\n`);
    }
    return EXIT.ok;
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  }
}

/** Prints an ArsError the way every client command does; other errors propagate. */
export function reportClientError(io: Io, command: string, error: unknown): number {
  if (error instanceof UsageError) {
    io.stderr(`ars ${command}: ${error.message}\nRun "ars help" for usage.\n`);
    return EXIT.usage;
  }
  if (isArsError(error)) {
    const status = error.status === 0 ? 'no response' : `HTTP ${error.status}`;
    io.stderr(`ars ${command}: ${error.code} (${status}): ${error.message}\n`);
    return EXIT.failure;
  }
  throw error;
}

async function connection(io: Io): Promise<{ baseUrl: string; token: string }> {
  const config = clientConfig(io.env);
  return { baseUrl: config.baseUrl, token: config.token ?? (await bootstrapToken(config.baseUrl)) };
}

type OptionSpec = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

function parse<O extends OptionSpec>(args: readonly string[], options: O) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`the ${what} is not valid JSON: ${text}`);
  }
}

/** Every request body carries `identity`; `{}` is backfilled by the gateway. */
function withIdentity(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || 'identity' in body) return body;
  return { identity: {}, ...body };
}
