import { ServiceError, buildOpenApiDocument } from '@ars/contracts';
import { PROMETHEUS_CONTENT_TYPE, metricsText } from '@ars/telemetry';
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../http/authenticate.ts';
import { authorizeMetrics } from '../http/metrics-access.ts';
import type { BusState } from '../ports.ts';

/** What the operational routes need. */
export interface OpsRoutesOptions {
  readonly bus: BusState;
  /** Verifies the bearer token of a `GET /metrics` from off the host. */
  readonly authenticator: Pick<Authenticator, 'verifier' | 'revocations'>;
}

/**
 * Operational routes: `GET /openapi.json` (the registry's OpenAPI 3.1
 * document), `GET /healthz` (liveness: the process answers) and `GET
 * /readyz` (readiness: NATS is connected; 503 `unavailable` otherwise),
 * unauthenticated; and `GET /metrics` (every series of the process in the
 * Prometheus text format: in the one-process system, every service's), for
 * a direct loopback caller or a token with `admin` or `console:fleet` only
 * (see `authorizeMetrics`).
 */
export async function opsRoutes(app: FastifyInstance, options: OpsRoutesOptions): Promise<void> {
  let openApi: string | undefined;

  app.get('/openapi.json', async (_request, reply) => {
    openApi ??= JSON.stringify(buildOpenApiDocument());
    return reply.type('application/json; charset=utf-8').send(openApi);
  });

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/metrics', async (request, reply) => {
    await authorizeMetrics(options.authenticator, request.socket.remoteAddress, request.headers);
    const text = await metricsText();
    if (text === undefined) throw new ServiceError('unavailable', 'metrics are not set up in this process');
    return reply.type(PROMETHEUS_CONTENT_TYPE).header('cache-control', 'no-store').send(text);
  });

  app.get('/readyz', async (request, reply) => {
    if (options.bus.isConnected()) return { status: 'ready' };
    // A failing probe is routine while NATS reconnects: answered, not logged as an error.
    request.log.warn('readiness probe: NATS is not connected');
    return reply.code(503).send(new ServiceError('unavailable', 'NATS is not connected').toEnvelope());
  });
}
