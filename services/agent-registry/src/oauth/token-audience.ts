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

function names(audience: unknown): string[] {
  if (typeof audience === 'string') return [audience];
  return Array.isArray(audience) ? audience.filter((a): a is string => typeof a === 'string') : [];
}

const namesResource = (audience: unknown, resource: string) =>
  names(audience).some((a) => normalise(a) === normalise(resource));

/** AudienceVerified of `tool.credential_exchanged` for `accessToken` requested with `resource` (absent: not sent). */
export function audienceVerified(accessToken: string, resource: string | undefined): boolean {
  if (resource === undefined) return false;
  const payload = jwtPayload(accessToken);
  if (payload === undefined) return true;
  return namesResource(payload.aud, resource);
}

/**
 * AudienceVerified of a credential an external broker handed out for
 * `resource`: the broker's answer names the resource as its `audience`, or
 * the credential is a JWT whose `aud` names it. An opaque credential with
 * another audience (a provider name, none) is not verified: the request
 * naming the resource is not enough, the broker may ignore it.
 */
export function brokerAudienceVerified(
  credential: string,
  audience: string | readonly string[] | undefined,
  resource: string,
): boolean {
  if (namesResource(audience, resource)) return true;
  const payload = jwtPayload(credential);
  return payload !== undefined && namesResource(payload.aud, resource);
}
