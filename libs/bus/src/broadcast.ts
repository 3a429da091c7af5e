import type { Bus } from './connection.ts';
import type { Subscription } from '@nats-io/transport-node';
import { utf8 } from './utf8.ts';

/**
 * Fan-out to every replica of a service: a core NATS subject without a queue
 * group, for an effect that must reach the one replica holding some state
 * (a call in flight there) when the request that asks for it was load
 * balanced to another. Fire and forget; the body is JSON.
 */
const decoder = new TextDecoder();

/** The broadcast subject `name` of `service`: `ars.bcast.<service>.<name>`. */
export function broadcastSubject(service: string, name: string): string {
  return `ars.bcast.${service}.${name}`;
}

/** Publishes `body` to every subscriber of `subject` (nothing when the connection is closed). */
export function publishBroadcast(bus: Bus, subject: string, body: unknown): void {
  if (bus.nc.isClosed()) return;
  bus.nc.publish(subject, utf8(JSON.stringify(body)));
}

/** Calls `handler` with each broadcast body on `subject` (malformed JSON is dropped: broadcasts are best effort). */
export function subscribeBroadcast(bus: Bus, subject: string, handler: (body: unknown) => void): Subscription {
  return bus.nc.subscribe(subject, {
    callback: (error, msg) => {
      if (error !== null) return;
      let body: unknown;
      try {
        body = JSON.parse(decoder.decode(msg.data));
      } catch {
        return; // not ours to answer: a broadcast has no reply
      }
      handler(body);
    },
  });
}
