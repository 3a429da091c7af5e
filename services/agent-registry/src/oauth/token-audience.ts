/**
 * Whether an access token was issued for the MCP server it is sent to
 * (RFC 8707): the resource indicator was sent with the token request, and,
 * when the token is a JWT, its `aud` names that resource. An opaque token's
 * audience cannot be read: the indicator having been sent is all there is.
 * Pure; the token is never logged or returned.
 */

function normalise(uri: string): string {
  const hash = uri.indexOf('#');
  const bare = hash < 0 ? uri : uri.slice(0, hash);
  return bare.endsWith('/') ? bare.slice(0, -1) : bare;
}

function jwtPayload(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const header = JSON.parse(Buffer.from(parts[0] ?? '', 'base64url').toString('utf8')) as unknown;
    if (typeof header !== 'object' || header === null || typeof (header as { alg?: unknown }).alg !== 'string') {
      return undefined;
    }
    const payload = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8')) as unknown;
    return typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** AudienceVerified of `tool.credential_exchanged` for `accessToken` requested with `resource` (absent: not sent). */
export function audienceVerified(accessToken: string, resource: string | undefined): boolean {
  if (resource === undefined) return false;
  const payload = jwtPayload(accessToken);
  if (payload === undefined) return true;
  const aud = payload.aud;
  const audiences =
    typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((a) => typeof a === 'string') : [];
  return audiences.some((a) => normalise(a) === normalise(resource));
}
