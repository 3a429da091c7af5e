import { isServiceError, MEMORY_PROMPT_BLOCKS } from '@ars/contracts';
import { callInternal } from '@ars/bus';
import type { RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { RunQuad } from './governance.ts';

/**
 * The caller memory a run's prompt carries: `_memory.prompt_blocks` (the
 * memory service's caller_memory strategy: tenant, user and session blocks
 * within its byte budget; it publishes `memory.caller_block_admitted` per
 * block and records the trace for `memory.strategy_trace`). Asked once when
 * a run is claimed and again after the run's own `memory_write`, not before
 * every step: a write by someone else during a run shows in the next run.
 * Memory not running: no blocks, one warning per outage.
 */

export interface MemoryPrompt {
  /** The prompt section (`Memory:` and one line per block), `''` when there are none. */
  blocks(run: RunQuad): Promise<string>;
}

/** Options of {@link createMemoryPrompt}. */
export interface MemoryPromptOptions {
  readonly rpc: RpcClient;
  readonly logger: Logger;
  /** Per call, in ms. */
  readonly timeoutMs: number;
}

/** The memory section of a prompt from the blocks' texts, in prompt order. */
export function memorySection(texts: readonly string[]): string {
  return texts.length === 0 ? '' : `Memory (what is known about this user and tenant):\n${texts.join('\n')}`;
}

export function createMemoryPrompt(options: MemoryPromptOptions): MemoryPrompt {
  const { rpc, logger, timeoutMs } = options;
  let absent = false;
  return {
    async blocks(run) {
      try {
        const answer = await callInternal(
          rpc,
          MEMORY_PROMPT_BLOCKS,
          { tenant: run.tenant, user: run.user, session: run.session, scopes: [] },
          { tenant: run.tenant, user: run.user, session: run.session, run: run.run },
          { timeoutMs },
        );
        absent = false;
        return memorySection(answer.blocks.map((b) => b.text));
      } catch (error) {
        const down = isServiceError(error) && (error.code === 'unavailable' || error.code === 'unimplemented');
        if (!down) {
          logger.warn({ err: error, taskId: run.run }, 'memory blocks unavailable for this prompt');
        } else if (!absent) {
          absent = true;
          logger.warn({ code: error.code }, 'memory service unavailable; prompts carry no memory');
        }
        return '';
      }
    },
  };
}
