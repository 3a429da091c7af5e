import { ServiceError, isServiceError } from '@ars/contracts';
import { isLoopbackAddress, revocationKeys, tokenFingerprint, tokenRevoked } from '@ars/auth';
import type { Authenticator } from './authenticate.ts';
import { bearerToken } from './authenticate.ts';

/** The scopes that may read `GET /metrics` from off the host (the fleet views' claims). */
export const METRICS_SCOPES: readonly string[] = ['admin', 'console:fleet'];

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/**
 * A caller on this host talking to the gateway directly: a loopback peer
 * whose request no proxy forwarded (a reverse proxy on the host would make
 * every remote caller loopback, so a `Forwarded` or `X-Forwarded-For`
 * header takes the exemption away).
 */
function directLoopback(remoteAddress: string | undefined, headers: Headers): boolean {
  return (
    isLoopbackAddress(remoteAddress) && headers.forwarded === undefined && headers['x-forwarded-for'] === undefined
  );
}

/**
 * Decides `GET /metrics`: the series name the agents, models and tools of
 * every tenant, so only a direct loopback caller, or a bearer token (verified
 * and not revoked, by the gateway's authenticator; no session needed) whose
 * scopes include `admin` or `console:fleet`, reads them. Throws the
 * contract's refusals: 401 `identity_required` (no token), 401
 * `auth_rejected` (bad or revoked), 403 `scope_mismatch` (no such scope).
 */
export async function authorizeMetrics(
  auth: Pick<Authenticator, 'verifier' | 'revocations'>,
  remoteAddress: string | undefined,
  headers: Headers,
): Promise<void> {
  if (directLoopback(remoteAddress, headers)) return;
  const token = bearerToken(headers);
  if (token === undefined) {
    throw new ServiceError(
      'identity_required',
      'GET /metrics needs Authorization: Bearer <token> with the admin or console:fleet scope',
    );
  }
  let claims;
  try {
    claims = await auth.verifier.verify(token);
  } catch (error) {
    if (isServiceError(error) && error.code === 'auth_rejected') throw error;
    throw new ServiceError('auth_rejected', 'the token could not be verified', { cause: error });
  }
  const keys = revocationKeys({ fingerprint: tokenFingerprint(token), jti: claims.jti });
  if ((await auth.revocations.find(keys)) !== undefined) throw tokenRevoked();
  if (!claims.scopes.some((scope) => METRICS_SCOPES.includes(scope))) {
    throw new ServiceError('scope_mismatch', 'GET /metrics needs the admin or console:fleet scope');
  }
}
