import { ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';

/** NATS header names carrying the verified identity of an RPC request. */
export const IDENTITY_HEADERS = {
  tenant: 'ars-tenant',
  user: 'ars-user',
  session: 'ars-session',
  scopes: 'ars-scopes',
} as const;

/**
 * Writes the identity as headers: each value `encodeURIComponent`-ed (so no
 * CR/LF or non-ASCII reaches the header block), scopes encoded one by one and
 * comma-joined.
 */
export function encodeIdentityHeaders(identity: VerifiedIdentity, set: (key: string, value: string) => void): void {
  set(IDENTITY_HEADERS.tenant, encodeURIComponent(identity.tenant));
  set(IDENTITY_HEADERS.user, encodeURIComponent(identity.user));
  set(IDENTITY_HEADERS.session, encodeURIComponent(identity.session));
  set(IDENTITY_HEADERS.scopes, identity.scopes.map((s) => encodeURIComponent(s)).join(','));
}

function decodeValue(name: string, raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch (error) {
    throw new ServiceError('invalid_request', `malformed ${name} header`, { cause: error });
  }
}

/**
 * Reads the identity back from headers. A missing tenant, user or session
 * header is ServiceError `identity_required`; a missing scopes header means no
 * scopes; a malformed value is `invalid_request`.
 */
export function decodeIdentityHeaders(get: (key: string) => string | undefined): VerifiedIdentity {
  const required = (key: 'tenant' | 'user' | 'session'): string => {
    const name = IDENTITY_HEADERS[key];
    const raw = get(name);
    if (raw === undefined) throw new ServiceError('identity_required', `request carries no ${name} header`);
    return decodeValue(name, raw);
  };
  const rawScopes = get(IDENTITY_HEADERS.scopes) ?? '';
  const scopes = rawScopes === '' ? [] : rawScopes.split(',').map((s) => decodeValue(IDENTITY_HEADERS.scopes, s));
  return { tenant: required('tenant'), user: required('user'), session: required('session'), scopes };
}
