import { z } from 'zod';
import { Id, MemoryKey } from '@ars/contracts';

/**
 * Bodies of the memory service's internal endpoints (service to service,
 * never routed by the gateway). Strict: an unknown member is `invalid_request`.
 */

const Triple = {
  tenant: z.string().min(1),
  user: z.string().min(1),
  session: z.string().min(1),
};

/** `_memory.prompt_blocks`: whose memory, and the run it is for (recorded for memory.strategy_trace). */
export const PromptBlocksRequest = z.strictObject({ ...Triple, run: Id.optional() });
export type PromptBlocksRequest = z.infer<typeof PromptBlocksRequest>;

/** `_memory.erase_session`: the session whose memory goes. */
export const EraseSessionRequest = z.strictObject(Triple);
export type EraseSessionRequest = z.infer<typeof EraseSessionRequest>;

/** `_memory.caller_read`: one key of the caller's memory. */
export const CallerReadRequest = z.strictObject({ ...Triple, key: MemoryKey });
export type CallerReadRequest = z.infer<typeof CallerReadRequest>;

/** `_memory.caller_write`: one key of the caller's own (tenant, user) memory. */
export const CallerWriteRequest = z.strictObject({ ...Triple, key: MemoryKey, value: z.unknown() });
export type CallerWriteRequest = z.infer<typeof CallerWriteRequest>;
