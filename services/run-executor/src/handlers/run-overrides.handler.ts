import { RunSetOverridesRequest } from '@ars/contracts';
import type { RunSetOverridesResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { splitRunOverrides } from '../engine/run-overrides.ts';
import type { RunOverridesRepository } from '../store/run-overrides.repository.ts';
import type { ApiDeps } from './deps.ts';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';

/**
 * `runs.set_overrides` (M): LLM overrides for the later runs of the verified
 * session — `reasoning_effort`, `temperature`, `max_tokens`, `system_prompt`,
 * `extra_instructions`, `model`. A value sets a member, `null` clears it, an
 * absent member is left unchanged. Runs read them when they are first
 * claimed (the last layer of the effective configuration); a run already
 * under way takes the change at its next step boundary, or refuses it
 * (`run-patches.ts`: `task.patch_applied` / `task.patch_rejected`, PatchID
 * the `updated_at` answered here). Publishes `runs.overrides_set` with the
 * Set* flags of the members the request named.
 */
export function createRunOverridesHandler(deps: ApiDeps, overrides: RunOverridesRepository): RpcHandler {
  return typedMethod(
    RunSetOverridesRequest,
    async ({ method, identity, body: request }): Promise<RunSetOverridesResponse> => {
      reconcileIdentity(method, identity, request.identity);
      const owner = { tenant: identity.tenant, user: identity.user, session: identity.session };
      const patch = splitRunOverrides(request.overrides);
      const at = new Date().toISOString();
      const actor = { ...owner, run: '' };
      const after = await overrides.apply(owner, patch, actor, at);
      deps.logger.info({ session: owner.session, members: [...patch.touched] }, 'run overrides set');
      await deps.publisher.publish({
        type: 'runs.overrides_set',
        identity: owner,
        occurredAt: at,
        payload: {
          Actor: actor,
          SessionID: owner.session,
          SetReasoningEffort: patch.touched.has('reasoning_effort'),
          SetTemperature: patch.touched.has('temperature'),
          SetMaxTokens: patch.touched.has('max_tokens'),
          SetSystemPrompt: patch.touched.has('system_prompt'),
          SetExtraInstructions: patch.touched.has('extra_instructions'),
          SetModel: patch.touched.has('model'),
          OccurredAt: at,
        },
      });
      return { session_id: owner.session, overrides: after.overrides, updated_at: after.updated_at };
    },
  );
}
