import { BlockList, isIP } from 'node:net';
import { ServiceError } from '@ars/contracts';
import { DEV_DEFAULT_IDENTITY } from './dev-issuer.ts';

/** The identity a dev bootstrap call asks for. */
export interface BootstrapIdentity {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  readonly scopes: readonly string[];
}

const BOOTSTRAP_MEMBERS: ReadonlySet<string> = new Set(['tenant', 'user', 'session', 'scopes']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readName(body: Record<string, unknown>, name: 'tenant' | 'user' | 'session'): string {
  const value = body[name];
  if (value === undefined) return DEV_DEFAULT_IDENTITY[name];
  if (typeof value !== 'string' || value === '')
    throw new ServiceError('invalid_request', `${name} must be a non-empty string`);
  return value;
}

function readScopes(body: Record<string, unknown>): readonly string[] {
  const value = body.scopes;
  if (value === undefined) return DEV_DEFAULT_IDENTITY.scopes;
  if (!Array.isArray(value) || !value.every((scope) => typeof scope === 'string')) {
    throw new ServiceError('invalid_request', 'scopes must be an array of strings');
  }
  return Object.freeze([...(value as string[])]);
}

/**
 * Parses the body of `POST /v1/dev/bootstrap.json`.
 * - Only `tenant`, `user`, `session` (non-empty strings) and `scopes` (an
 *   array of strings) are accepted; any other member (including
 *   `tenant_id`, `user_id`, `session_id`) is 400 `invalid_request` naming it.
 * - `{}` (or an absent body) keeps the default admin identity of {@link DEV_DEFAULT_IDENTITY}.
 * - Each member given overrides its default alone: a partial triple keeps
 *   `dev` for the members it omits, and omitted `scopes` keeps the default
 *   scopes. An explicit `scopes: []` mints a scopeless token.
 * - Any other body (null, an array, a string) is 400 `invalid_request`.
 */
export function parseBootstrapBody(body: unknown): BootstrapIdentity {
  if (body === undefined) return DEV_DEFAULT_IDENTITY;
  if (!isPlainObject(body)) throw new ServiceError('invalid_request', 'the bootstrap body must be a JSON object');
  const unknown = Object.keys(body).filter((member) => !BOOTSTRAP_MEMBERS.has(member));
  if (unknown.length > 0) {
    throw new ServiceError('invalid_request', `unknown bootstrap member(s): ${unknown.join(', ')}`);
  }
  return Object.freeze({
    tenant: readName(body, 'tenant'),
    user: readName(body, 'user'),
    session: readName(body, 'session'),
    scopes: readScopes(body),
  });
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** True for 127.0.0.0/8, ::1 and IPv4-mapped ::ffff:127.x addresses. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  // BlockList matches IPv4-mapped IPv6 addresses against the IPv4 subnet.
  return LOOPBACK.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const LOCAL_HOST = /^(?:localhost|127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?$/i;

/** True when a Host header names a local authority: localhost, 127.0.0.1 or [::1], with an optional port. */
export function isLocalHostHeader(host: string | undefined): boolean {
  if (host === undefined) return false;
  const match = LOCAL_HOST.exec(host);
  if (match === null) return false;
  const port = match[1];
  return port === undefined || Number(port) <= 65535;
}

/** Inputs of {@link isLoopbackRequest}. */
export interface LoopbackRequestInput {
  /** The TCP peer address (`socket.remoteAddress`), never a forwarded header. */
  readonly remoteAddress: string | undefined;
  /** The request `Host` header. */
  readonly host: string | undefined;
}

/**
 * The dev bootstrap guard: true only when the TCP peer is a loopback address
 * and the Host header names a local authority (case-insensitive). Anything
 * else, missing values included, is false (the route answers a flat 403).
 */
export function isLoopbackRequest({ remoteAddress, host }: LoopbackRequestInput): boolean {
  return isLoopbackAddress(remoteAddress) && isLocalHostHeader(host);
}
