import { bootstrapToken, isControlEvent } from '@ars/client';
import type { BootstrapRequest } from '@ars/client';
import { clientConfig } from '../config.ts';
import { EXIT } from '../io.ts';
import type { Io } from '../io.ts';
import { formatEventLine } from '../render/event-summary.ts';
import { colorOf, connect, parse, parseJson, untilInterrupted, UsageError } from './client-support.ts';

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
  const client = await connect(io);
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
 * `ars events [--run id] [--type t]… [--admin] [--from seq] [--session id] [--control] [--pretty]`:
 * prints each event frame as one JSON line (or, with --pretty, one readable
 * line) until Ctrl-C (exit 0).
 */
export async function eventsCommand(io: Io, args: readonly string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    run: { type: 'string' },
    type: { type: 'string', multiple: true },
    admin: { type: 'boolean' },
    from: { type: 'string' },
    session: { type: 'string' },
    control: { type: 'boolean' },
    pretty: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (positionals.length > 0) throw new UsageError(`events takes options only, not "${positionals[0]}"`);
  if (values.pretty === true && values.json === true) throw new UsageError('--pretty and --json exclude each other');
  if (values.from !== undefined && !/^\d+$/.test(values.from))
    throw new UsageError('--from must be an event sequence number');
  const client = await connect(io);
  const color = colorOf(io);
  await untilInterrupted(async (signal) => {
    const stream = client.subscribe({
      signal,
      includeControlEvents: values.control === true,
      ...(values.run === undefined ? {} : { run: values.run }),
      ...(values.type === undefined ? {} : { types: values.type.flatMap((t) => t.split(',')) }),
      ...(values.admin === true ? { admin: true } : {}),
      ...(values.from === undefined ? {} : { lastEventId: values.from }),
      ...(values.session === undefined ? {} : { session: values.session }),
    });
    for await (const item of stream) {
      if (isControlEvent(item)) {
        const data = typeof item.data === 'string' ? item.data : JSON.stringify(item.data);
        io.stdout(
          values.pretty
            ? `-- ${item.control} ${data}\n`
            : `${JSON.stringify({ control: item.control, data: item.data })}\n`,
        );
      } else {
        io.stdout(values.pretty ? `${formatEventLine(item, { color })}\n` : `${JSON.stringify(item)}\n`);
      }
    }
  });
  return EXIT.ok;
}

/** Every request body carries `identity`; `{}` is backfilled by the gateway. */
function withIdentity(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || 'identity' in body) return body;
  return { identity: {}, ...body };
}
