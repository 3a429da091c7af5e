import { ServiceError, buildOpenApiDocument } from '@ars/contracts';
import type { FastifyInstance } from 'fastify';
import type { BusState } from '../ports.ts';

/** What the operational routes need. */
export interface OpsRoutesOptions {
  readonly bus: BusState;
}

/**
 * Unauthenticated operational routes: `GET /openapi.json` (the registry's
 * OpenAPI 3.1 document), `GET /healthz` (liveness: the process answers) and
 * `GET /readyz` (readiness: NATS is connected; 503 `unavailable` otherwise).
 */
export async function opsRoutes(app: FastifyInstance, options: OpsRoutesOptions): Promise<void> {
  let openApi: string | undefined;

  app.get('/openapi.json', async (_request, reply) => {
    openApi ??= JSON.stringify(buildOpenApiDocument());
    return reply.type('application/json; charset=utf-8').send(openApi);
  });

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (request, reply) => {
    if (options.bus.isConnected()) return { status: 'ready' };
    // A failing probe is routine while NATS reconnects: answered, not logged as an error.
    request.log.warn('readiness probe: NATS is not connected');
    return reply.code(503).send(new ServiceError('unavailable', 'NATS is not connected').toEnvelope());
  });
}
