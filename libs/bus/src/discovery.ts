import { NoRespondersError, RequestError } from '@nats-io/transport-node';
import type { Bus } from './connection.ts';

/** One endpoint of a discovered service. */
export interface ServiceEndpointInfo {
  readonly name: string;
  readonly subject: string;
  readonly queue_group?: string;
  readonly metadata?: Record<string, string>;
}

/** One replica of a service as `$SRV.INFO` describes it. */
export interface ServiceInfo {
  readonly name: string;
  /** The replica's services-API id. */
  readonly id: string;
  readonly version: string;
  readonly description: string;
  readonly metadata: Record<string, string>;
  readonly endpoints: readonly ServiceEndpointInfo[];
}

export interface PingOptions {
  /** Longest wait for the first answer; later answers end 300 ms after the last one. */
  readonly timeoutMs: number;
  /** Only replicas of this service. */
  readonly name?: string;
}

const decoder = new TextDecoder();

function toServiceInfo(raw: unknown): ServiceInfo | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const r = raw as Partial<Record<keyof ServiceInfo, unknown>>;
  if (typeof r.name !== 'string' || typeof r.id !== 'string') return undefined;
  return {
    name: r.name,
    id: r.id,
    version: typeof r.version === 'string' ? r.version : '',
    description: typeof r.description === 'string' ? r.description : '',
    metadata: (typeof r.metadata === 'object' && r.metadata !== null ? r.metadata : {}) as Record<string, string>,
    endpoints: Array.isArray(r.endpoints) ? (r.endpoints as ServiceEndpointInfo[]) : [],
  };
}

function isNoResponders(error: unknown): boolean {
  return error instanceof NoRespondersError || (error instanceof RequestError && error.isNoResponders());
}

/**
 * Fans a `$SRV.INFO` request out to every service replica on the bus and
 * collects the answers (an empty list when nothing answers).
 */
export async function pingServices(bus: Bus, options: PingOptions): Promise<ServiceInfo[]> {
  const subject = options.name === undefined ? '$SRV.INFO' : `$SRV.INFO.${options.name}`;
  const found: ServiceInfo[] = [];
  try {
    const replies = await bus.nc.requestMany(subject, undefined, { strategy: 'stall', maxWait: options.timeoutMs });
    for await (const msg of replies) {
      if (msg.data.length === 0) continue;
      try {
        const info = toServiceInfo(JSON.parse(decoder.decode(msg.data)));
        if (info !== undefined) found.push(info);
      } catch {
        // A malformed answer is some other program's; skip it.
      }
    }
  } catch (error) {
    if (!isNoResponders(error)) throw error;
  }
  return found;
}
