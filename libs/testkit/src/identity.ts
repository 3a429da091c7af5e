import { randomUUID } from 'node:crypto';
import { bootstrapToken } from '@ars/client';

/** A (tenant, user, session) triple no other test uses. */
export interface TestIdentity {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

let counter = 0;

/**
 * Unique tenant, user and session names (`<prefix>-t-<id>`, `-u-`, `-s-`),
 * so that tests sharing one system never see each other's data.
 */
export function uniqueIdentity(prefix: string): TestIdentity {
  const id = `${randomUUID().slice(0, 8)}${(counter++).toString(36)}`;
  return { tenant: `${prefix}-t-${id}`, user: `${prefix}-u-${id}`, session: `${prefix}-s-${id}` };
}

/** What {@link mintToken} puts in the token. */
export interface MintTokenRequest extends TestIdentity {
  /** @default [] (an ordinary, scopeless caller) */
  readonly scopes?: readonly string[];
}

/** Mints a token for this identity through the dev bootstrap of a test system's gateway. */
export function mintToken(baseUrl: string, request: MintTokenRequest): Promise<string> {
  return bootstrapToken(baseUrl, {
    tenant: request.tenant,
    user: request.user,
    session: request.session,
    scopes: request.scopes ?? [],
  });
}
