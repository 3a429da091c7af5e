import { createArsError } from './errors.ts';
import { normalizeBaseUrl, postJson } from './http.ts';
import type { PostTransport } from './transport-fetch.ts';

/**
 * The dev bootstrap body: only these members are accepted by the gateway.
 * `{}` mints the default admin token (tenant, user and session `dev`); an
 * explicit empty `scopes` mints a token with no scopes.
 */
export interface BootstrapRequest {
  readonly tenant?: string;
  readonly user?: string;
  readonly session?: string;
  readonly scopes?: readonly string[];
}

/** The dev bootstrap route (dev mode, loopback only). */
export const BOOTSTRAP_PATH = '/v1/dev/bootstrap.json';

/**
 * Mints a token from a dev-mode gateway's `POST /v1/dev/bootstrap.json`.
 * Resolves to the token string; failures throw ArsError (403 from a
 * non-loopback address, 400 naming an unknown member, 404 in production mode).
 */
export type BootstrapToken = (
  baseUrl: string,
  body?: BootstrapRequest,
  options?: { signal?: AbortSignal },
) => Promise<string>;

/** {@link BootstrapToken} over a transport (each entry point passes its runtime's). */
export function bootstrapTokenWith(transport: PostTransport): BootstrapToken {
  return (baseUrl, body = {}, options = {}) => bootstrapToken(transport, baseUrl, body, options);
}

async function bootstrapToken(
  transport: PostTransport,
  baseUrl: string,
  body: BootstrapRequest,
  options: { signal?: AbortSignal },
): Promise<string> {
  const url = normalizeBaseUrl(baseUrl) + BOOTSTRAP_PATH;
  const answer = await postJson(url, body, {}, options.signal, transport);
  const token = pickToken(answer);
  if (token === undefined) {
    throw createArsError(200, 'invalid_response', `${url} answered without a token`);
  }
  return token;
}

// The response shape beyond carrying the token is not in the spec: accept the usual spellings.
function pickToken(answer: unknown): string | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const record = answer as Record<string, unknown>;
  for (const key of ['token', 'access_token', 'ACCESS_TOKEN']) {
    const value = record[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}
