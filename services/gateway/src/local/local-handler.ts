import type { VerifiedIdentity } from '@ars/contracts';

/** A gateway-owned method's request: the same shape as an RPC request on the bus. */
export interface LocalRequest {
  readonly method: string;
  readonly identity: VerifiedIdentity;
  readonly body: unknown;
}

/** A gateway-owned method, answered in process. */
export type LocalHandler = (request: LocalRequest) => Promise<unknown>;
