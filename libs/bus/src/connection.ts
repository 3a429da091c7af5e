import { connect, deferred } from '@nats-io/transport-node';
import type { Deferred, NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { Logger } from '@ars/telemetry';
import { utf8 } from './utf8.ts';

/** Options of {@link connectBus}. */
export interface BusOptions {
  /** One URL, several, or a comma-separated list as in `NATS_URL` (`nats://a:4222,nats://b:4222`). */
  readonly servers: string | readonly string[];
  /** Connection name shown by the server (`connz`); use the service name. */
  readonly name: string;
  /** Receives connection status changes (disconnects at warn, the rest at info). */
  readonly logger?: Logger;
  /**
   * Keep retrying the first connection as well instead of failing when no
   * server answers yet. @default false
   */
  readonly waitOnFirstConnect?: boolean;
}

/** A NATS connection with its JetStream client and manager. */
export interface Bus {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  /** Drains subscriptions and closes; safe to call twice. */
  close(): Promise<void>;
}

/**
 * True while `nc` has a live connection to a server: false from the moment
 * its socket closes until a reconnect completes, and once closed. nats-core
 * keeps what is published meanwhile only until its next reconnect attempt,
 * which discards it, so a message sent while this is false is as good as
 * lost. Reads nats-core's own flag (3.x), the one its reconnect loop sets;
 * a connection of another shape counts as up unless closed.
 */
export function isConnectionUp(nc: NatsConnection): boolean {
  if (nc.isClosed()) return false;
  const connected = (nc as unknown as { protocol?: { connected?: unknown } }).protocol?.connected;
  return typeof connected === 'boolean' ? connected : true;
}

/**
 * The largest message the connected server accepts, in bytes (its
 * `max_payload`, 1 MiB by default); `undefined` until the server's INFO
 * arrived.
 */
export function maxPayloadOf(bus: Pick<Bus, 'nc'>): number | undefined {
  return bus.nc.info?.max_payload;
}

function watchStatus(nc: NatsConnection, logger: Logger): void {
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'ping' || s.type === 'slowConsumer') continue;
      const fields = { status: s.type, server: 'server' in s ? s.server : undefined };
      const degraded = s.type === 'disconnect' || s.type === 'error' || s.type === 'staleConnection';
      if (degraded) logger.warn(fields, 'bus connection status');
      else logger.info(fields, 'bus connection status');
    }
    // The status iterator ends, or fails, only with the connection: nothing is left to log then.
  })().catch(() => undefined);
}

function serverList(servers: string | readonly string[]): string[] {
  const list = typeof servers === 'string' ? servers.split(',') : [...servers];
  return list.map((s) => s.trim()).filter((s) => s !== '');
}

/**
 * Connects to NATS and opens JetStream. Once connected it reconnects forever
 * (a service outlives any server restart); the caller decides when to close.
 * Request timeouts carry no stack of the calling site (`noAsyncTraces`), and
 * outgoing messages leave in one socket write per event-loop turn
 * (see `coalesceFlushes`).
 */
export async function connectBus(options: BusOptions): Promise<Bus> {
  const nc = await connect({
    servers: serverList(options.servers),
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
    waitOnFirstConnect: options.waitOnFirstConnect ?? false,
    // Otherwise every request and every subscription with a timeout builds an
    // Error (with its stack) up front, only to report where a timeout came
    // from: a few percent of a busy service's CPU. Our callers map timeouts
    // to ServiceError `timeout` naming the service and method anyway.
    noAsyncTraces: true,
  });
  if (options.logger !== undefined) watchStatus(nc, options.logger);
  coalesceFlushes(nc);
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc);
  } catch (error) {
    await nc.close();
    throw error;
  }
  return {
    nc,
    js: jetstream(nc),
    jsm,
    async close(): Promise<void> {
      if (nc.isClosed()) return;
      if (!nc.isDraining()) {
        await nc.drain().catch(() => nc.close());
      }
      await nc.closed();
    },
  };
}

/** The parts of nats-core's protocol handler that {@link coalesceFlushes} touches (3.x). */
interface ProtocolInternals {
  readonly outbound: { fill(buf: Uint8Array, ...payloads: Uint8Array[]): void; size(): number };
  readonly pendingLimit: number;
  flushPending(): void;
  sendCommand(cmd: string | Uint8Array, ...payloads: Uint8Array[]): void;
  /** Sends a PING and writes at once; resolves on its PONG (`nc.flush()`, a subscription's `drain()`). */
  flush(pong?: Deferred<void>): Promise<void>;
  /** What waits for a PONG, in the order of the PINGs. */
  readonly pongs: Deferred<void>[];
}

function isProtocolInternals(value: unknown): value is ProtocolInternals {
  const p = value as Partial<ProtocolInternals> | undefined;
  return (
    typeof p?.sendCommand === 'function' &&
    typeof p.flushPending === 'function' &&
    typeof p.flush === 'function' &&
    Array.isArray(p.pongs) &&
    typeof p.pendingLimit === 'number' &&
    typeof p.outbound?.fill === 'function' &&
    typeof p.outbound.size === 'function'
  );
}

/**
 * Writes what `nc` holds for its socket now instead of at the end of the
 * turn (`coalesceFlushes`), in the same order. For what a service sends
 * from code that itself ran at the end of a turn (after its store's
 * commit): its end-of-turn write was already due, and the next one is a
 * whole turn away. Nothing happens while disconnected, or on a connection
 * of another shape.
 */
export function flushNow(nc: NatsConnection): void {
  const protocol = (nc as unknown as { protocol?: unknown }).protocol;
  if (isProtocolInternals(protocol) && protocol.outbound.size() > 0) protocol.flushPending();
}

/**
 * nats-core writes its outbound buffer to the socket in a microtask after
 * the first command of a batch, so a service that answers requests, acks and
 * publishes from many promise continuations makes one `write(2)` per
 * continuation: a socket write (and a wake-up of nats-server) for nearly
 * every message, which profiles showed as 8-12% of a busy service's CPU.
 * Here everything a turn of the event loop sends leaves in one write at the
 * end of that turn (`setImmediate`); a full buffer (`pendingLimit`) still
 * flushes at once, and the order of commands is unchanged. Measured on the
 * runs benchmark against flushing the turn's first batch at once and the
 * rest at its end: 226 → 264 runs/s, and start → `task.spawned` no slower
 * (a quiet process reaches the end of its turn within microseconds). A busy
 * one may not for milliseconds, so what an HTTP caller waits on is written
 * at once instead (`flushNow`: the gateway's requests, the replies of public
 * methods). The PING of `nc.flush()` and of a subscription's `drain()` (a
 * run's control inbox closing) leaves with the turn's write too: nats-core
 * wrote it at once, a socket write of its own for every run. It patches the
 * one connection's protocol handler, and only when its shape is the one
 * known (else nats-core's own flushing stays).
 */
function coalesceFlushes(nc: NatsConnection): void {
  const protocol = (nc as unknown as { protocol?: unknown }).protocol;
  if (!isProtocolInternals(protocol)) return;
  let scheduled = false;
  const endOfTurn = (): void => {
    scheduled = false;
    protocol.flushPending();
  };
  const atEndOfTurn = (): void => {
    if (protocol.outbound.size() >= protocol.pendingLimit) protocol.flushPending();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(endOfTurn);
    }
  };
  protocol.sendCommand = (cmd, ...payloads) => {
    protocol.outbound.fill(typeof cmd === 'string' ? utf8(cmd) : cmd, ...payloads);
    atEndOfTurn();
  };
  // nats-core's flush, written at the end of the turn: its PONG answers the PINGs in order.
  protocol.flush = (pong = deferred<void>()) => {
    protocol.pongs.push(pong);
    protocol.outbound.fill(PING);
    atEndOfTurn();
    return pong;
  };
}

const PING = utf8('PING\r\n');
