import { GOVERNANCE_ADMIT_LLM_CALL, refuse } from '@ars/contracts';
import type { RefusalReason as ReasonOf, ServiceError } from '@ars/contracts';

/**
 * Why governance refused an LLM call: the refusals `_governance.admit_llm_call`
 * declares in `@ars/contracts`. Each reason is also the `ErrorCode` the run
 * fails with (`task.failed`); it travels in the error reply's `reason`.
 */
export type RefusalReason = ReasonOf<typeof GOVERNANCE_ADMIT_LLM_CALL>;

/** The refusal as thrown by `_governance.admit_llm_call`; the message reads `<reason>: <detail>`. */
export function refusal(reason: RefusalReason, detail: string): ServiceError {
  return refuse(GOVERNANCE_ADMIT_LLM_CALL, reason, `${reason}: ${detail}`);
}
