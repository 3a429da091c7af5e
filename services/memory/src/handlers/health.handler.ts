import { MemoryHealthRequest } from '@ars/contracts';
import type { MemoryHealthResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import type { MemoryDeps } from './deps.ts';
import { MAX_SCOPE_ITEMS } from './deps.ts';
import { targetFor } from './identity.ts';
import { typedMethod } from '@ars/service-kit';

/**
 * memory.health: the service's health (a live store probe; see
 * `assessHealth`) and the size of the caller's memory (tenant tier, its
 * user's, its session's): item count and bytes of JSON values.
 */
export function createHealthHandler(deps: MemoryDeps): RpcHandler {
  return typedMethod(
    MemoryHealthRequest,
    async ({ method, identity: verified, body: request }): Promise<MemoryHealthResponse> => {
      const target = await targetFor(deps, method, verified, request.identity);
      let itemCount = 0;
      let sizeBytes = 0;
      try {
        const records = await deps.items.all({ kind: 'own', owner: target }, MAX_SCOPE_ITEMS);
        itemCount = records.length;
        sizeBytes = records.reduce((sum, record) => sum + record.size_bytes, 0);
      } catch (error) {
        // The probe below reports the store as unavailable; the figures stay zero.
        deps.logger.warn({ err: error }, 'memory figures unavailable');
      }
      const assessment = await deps.health.check();
      return {
        health: assessment.health,
        reason: assessment.reason,
        item_count: itemCount,
        size_bytes: sizeBytes,
        checked_at: deps.now().toISOString(),
      };
    },
  );
}
