/**
 * Message counts of a nats-server's clients, read from its monitoring
 * endpoint (`/connz`). Unlike CPU time on a shared machine they do not
 * depend on what else the machine is doing, so the runs benchmark reports
 * them per run beside the CPU figures.
 */

/** What one client connection moved, from the server's side. */
export interface MessageCounts {
  /** Messages the client published. */
  sent: number;
  /** Messages the server delivered to it. */
  delivered: number;
  sentBytes: number;
  deliveredBytes: number;
}

interface ConnzConnection {
  readonly cid: number;
  readonly name?: string;
  readonly in_msgs: number;
  readonly out_msgs: number;
  readonly in_bytes: number;
  readonly out_bytes: number;
}

/** Counts of every open connection, by `name#cid` (a service's replicas each have their own). */
export async function connectionCounts(monitorPort: number): Promise<Map<string, MessageCounts>> {
  const response = await fetch(`http://127.0.0.1:${monitorPort}/connz?limit=4096`);
  if (!response.ok) throw new Error(`connz answered ${response.status}`);
  const body = (await response.json()) as { connections?: ConnzConnection[] };
  const counts = new Map<string, MessageCounts>();
  for (const c of body.connections ?? []) {
    counts.set(`${c.name ?? 'unnamed'}#${c.cid}`, {
      sent: c.in_msgs,
      delivered: c.out_msgs,
      sentBytes: c.in_bytes,
      deliveredBytes: c.out_bytes,
    });
  }
  return counts;
}

/** A service's name from its connection's: the instance id without its random suffix. */
export function serviceOf(connection: string): string {
  const name = connection.slice(0, connection.lastIndexOf('#'));
  return name.replace(/-[0-9a-f]{6,}$/i, '');
}

const none = (): MessageCounts => ({ sent: 0, delivered: 0, sentBytes: 0, deliveredBytes: 0 });

/** What each service's connections moved between two readings (connections of `after` only). */
export function countsSince(
  before: ReadonlyMap<string, MessageCounts>,
  after: ReadonlyMap<string, MessageCounts>,
): Map<string, MessageCounts> {
  const out = new Map<string, MessageCounts>();
  for (const [connection, now] of after) {
    const then = before.get(connection) ?? none();
    const service = serviceOf(connection);
    const sum = out.get(service) ?? none();
    sum.sent += now.sent - then.sent;
    sum.delivered += now.delivered - then.delivered;
    sum.sentBytes += now.sentBytes - then.sentBytes;
    sum.deliveredBytes += now.deliveredBytes - then.deliveredBytes;
    out.set(service, sum);
  }
  return out;
}
