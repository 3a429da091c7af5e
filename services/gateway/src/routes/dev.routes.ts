import { ServiceError } from '@ars/contracts';
import { isLoopbackRequest, parseBootstrapBody } from '@ars/auth';
import type { BootstrapIdentity } from '@ars/auth';
import type { FastifyInstance } from 'fastify';
import type { DevTokenMinter } from '../ports.ts';

/** The development bootstrap route; it exists in dev mode only. */
export const BOOTSTRAP_PATH = '/v1/dev/bootstrap.json';

/** What the dev routes need. */
export interface DevRoutesOptions {
  readonly issuer: DevTokenMinter;
  /** Lifetime of minted tokens, in seconds. */
  readonly ttlSeconds: number;
}

/** The bootstrap response: the token plus the identity it carries. */
export interface BootstrapResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  /** Seconds until the token expires. */
  readonly expires_in: number;
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  readonly scopes: readonly string[];
}

/** Mints a dev token for the parsed bootstrap identity (defaults already applied). */
async function mintBootstrapToken(options: DevRoutesOptions, identity: BootstrapIdentity): Promise<BootstrapResponse> {
  const { tenant, user, session } = identity;
  const scopes = [...identity.scopes];
  const accessToken = await options.issuer.mint({ tenant, user, session, scopes, ttlSeconds: options.ttlSeconds });
  return {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: options.ttlSeconds,
    tenant,
    user,
    session,
    scopes,
  };
}

/**
 * `POST /v1/dev/bootstrap.json`: loopback peers naming a local Host only
 * (anything else: a flat 403 `forbidden`); body members `tenant`, `user`,
 * `session`, `scopes` only (400 naming any other); `{}` or no body gives the
 * default admin token; another verb gives a bare 405.
 */
export async function devRoutes(app: FastifyInstance, options: DevRoutesOptions): Promise<void> {
  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'POST') return reply.code(405).header('allow', 'POST').send();
    const host = request.headers.host;
    if (!isLoopbackRequest({ remoteAddress: request.socket.remoteAddress, host })) {
      throw new ServiceError('forbidden', 'the dev bootstrap answers loopback callers naming a local host only');
    }
    return undefined;
  });

  app.all(BOOTSTRAP_PATH, async (request) => {
    return mintBootstrapToken(options, parseBootstrapBody(request.body));
  });
}
