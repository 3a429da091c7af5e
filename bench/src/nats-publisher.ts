/**
 * A minimal NATS publisher speaking the text protocol over one TCP socket,
 * so that the event benchmark publishes from outside the system without
 * depending on its libraries. It writes what `@ars/bus`'s publisher stores:
 * the StoredEvent JSON on `ars.ev.<tenant>.<user>.<session>.<type>`
 * (identity tokens base64url, `_` for empty) with the run's token in an
 * `Ars-Run` header (when there is a run);
 * the EVENTS stream captures every message published on `ars.ev.>`.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { once } from 'node:events';

/** The identity of a published event. */
export interface Identity {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  readonly run?: string;
}

function token(value: string): string {
  return value === '' ? '_' : Buffer.from(value, 'utf8').toString('base64url');
}

/** The subject `@ars/bus` stores an event on. */
export function eventSubject(identity: Identity, type: string): string {
  return `ars.ev.${token(identity.tenant)}.${token(identity.user)}.${token(identity.session)}.${type}`;
}

/** One open publishing connection. */
export interface NatsPublisher {
  /** Publishes one event (fire and forget; `flush()` waits until the server has processed everything sent). */
  publish(identity: Identity, type: string, payload: Record<string, unknown>): void;
  /** Resolves once the server answered a PING sent after every earlier publish. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Connects to `nats://host:port` and sends CONNECT (headers enabled). */
export async function connectPublisher(url: string): Promise<NatsPublisher> {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect({ host: hostname, port: Number(port) });
  socket.setNoDelay(true);
  await once(socket, 'connect');
  socket.write(`CONNECT ${JSON.stringify({ verbose: false, pedantic: false, headers: true, name: 'bench' })}\r\n`);
  const pongs: (() => void)[] = [];
  let buffer = '';
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    let end: number;
    while ((end = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (line === 'PING') socket.write('PONG\r\n');
      else if (line === 'PONG') pongs.shift()?.();
      else if (line.startsWith('-ERR')) process.stderr.write(`nats: ${line}\n`);
    }
  });
  return {
    publish(identity, type, payload) {
      const body = Buffer.from(
        JSON.stringify({
          id: randomUUID(),
          type,
          occurred_at: new Date().toISOString(),
          tenant: identity.tenant,
          user: identity.user,
          session: identity.session,
          run: identity.run ?? '',
          payload,
        }),
      );
      const run = identity.run === undefined || identity.run === '' ? '' : `Ars-Run: ${token(identity.run)}\r\n`;
      const headers = Buffer.from(`NATS/1.0\r\n${run}\r\n`);
      socket.write(
        `HPUB ${eventSubject(identity, type)} ${headers.length} ${headers.length + body.length}\r\n${headers}${body}\r\n`,
      );
    },
    flush() {
      return new Promise((resolve) => {
        pongs.push(resolve);
        socket.write('PING\r\n');
      });
    },
    async close() {
      socket.end();
      await once(socket, 'close');
    },
  };
}
