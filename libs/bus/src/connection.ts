import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { Logger } from '@ars/telemetry';

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

function watchStatus(nc: NatsConnection, logger: Logger): void {
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'ping' || s.type === 'slowConsumer') continue;
      const fields = { status: s.type, server: 'server' in s ? s.server : undefined };
      const degraded = s.type === 'disconnect' || s.type === 'error' || s.type === 'staleConnection';
      if (degraded) logger.warn(fields, 'bus connection status');
      else logger.info(fields, 'bus connection status');
    }
  })().catch(() => undefined);
}

function serverList(servers: string | readonly string[]): string[] {
  const list = typeof servers === 'string' ? servers.split(',') : [...servers];
  return list.map((s) => s.trim()).filter((s) => s !== '');
}

/**
 * Connects to NATS and opens JetStream. Once connected it reconnects forever
 * (a service outlives any server restart); the caller decides when to close.
 */
export async function connectBus(options: BusOptions): Promise<Bus> {
  const nc = await connect({
    servers: serverList(options.servers),
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
    waitOnFirstConnect: options.waitOnFirstConnect ?? false,
  });
  if (options.logger !== undefined) watchStatus(nc, options.logger);
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
