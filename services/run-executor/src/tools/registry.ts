import { z } from 'zod';
import type { ApprovalPolicy, ToolExposure } from '@ars/contracts';
import { ToolError, isRetryable, sleep } from './tool.ts';
import type { ToolContext, ToolDefinition, ToolErrorClass } from './tool.ts';

/** A tool as a provider declares it to the model. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments. */
  readonly parameters: Record<string, unknown>;
}

export interface ToolRegistry {
  get(name: string): ToolDefinition | undefined;
  /** The tools a run may see under the agent's exposure (all when absent). */
  exposed(exposure: ToolExposure | undefined): ToolDefinition[];
  specs(tools: readonly ToolDefinition[]): ToolSpec[];
}

/** Creates a registry; `approvalOverrides` replaces the approval policy of the named tools. */
export function createToolRegistry(
  tools: readonly ToolDefinition[],
  approvalOverrides: Readonly<Record<string, ApprovalPolicy>> = {},
): ToolRegistry {
  const byName = new Map<string, ToolDefinition>();
  for (const tool of tools) {
    const approval = approvalOverrides[tool.name];
    byName.set(tool.name, approval === undefined ? tool : { ...tool, approval });
  }
  const specCache = new Map<string, ToolSpec>();
  return {
    get: (name) => byName.get(name),
    exposed(exposure): ToolDefinition[] {
      const all = [...byName.values()];
      if (exposure === undefined || exposure.mode === 'all') return all;
      const listed = new Set(exposure.tools);
      return all.filter((t) => (exposure.mode === 'allow_list' ? listed.has(t.name) : !listed.has(t.name)));
    },
    specs(list): ToolSpec[] {
      return list.map((tool) => {
        let spec = specCache.get(tool.name);
        if (spec === undefined) {
          const parameters = z.toJSONSchema(tool.args, { io: 'input', unrepresentable: 'any' }) as Record<
            string,
            unknown
          >;
          delete parameters.$schema;
          spec = { name: tool.name, description: tool.description, parameters };
          specCache.set(tool.name, spec);
        }
        return spec;
      });
    },
  };
}

/** The outcome of a tool call after its retry policy. */
export type ToolOutcome =
  | { readonly ok: true; readonly output: string; readonly attempts: number; readonly durationMs: number }
  | {
      readonly ok: false;
      readonly attempts: number;
      readonly durationMs: number;
      readonly errorClass: ToolErrorClass;
      readonly error: string;
      /** True when retryable failures used up every attempt of the policy. */
      readonly exhausted: boolean;
    };

function asToolError(error: unknown, signal: AbortSignal): ToolError {
  if (error instanceof ToolError) return error;
  if (signal.aborted) return new ToolError('cancelled', 'aborted');
  return new ToolError('permanent', error instanceof Error ? error.message : String(error));
}

/**
 * Runs a call with the tool's retry policy: a retryable failure is retried
 * after a doubling backoff until `maxAttempts`; `onAttemptFailed` sees every
 * failed attempt. A cancelled attempt (aborted signal) ends the call at once.
 */
export async function invokeWithPolicy(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  context: Omit<ToolContext, 'attempt'>,
  onAttemptFailed: (attempt: number, error: ToolError) => void,
): Promise<ToolOutcome> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  let backoff = tool.retry.backoffMs;
  for (let attempt = 1; ; attempt++) {
    try {
      const output = await tool.run(args, { ...context, attempt });
      return { ok: true, output, attempts: attempt, durationMs: elapsed() };
    } catch (caught) {
      const error = asToolError(caught, context.signal);
      if (error.errorClass === 'cancelled' || context.signal.aborted) throw error;
      onAttemptFailed(attempt, error);
      const retry = isRetryable(error.errorClass) && attempt < tool.retry.maxAttempts;
      if (!retry) {
        const exhausted = isRetryable(error.errorClass) && tool.retry.maxAttempts > 1;
        return {
          ok: false,
          attempts: attempt,
          durationMs: elapsed(),
          errorClass: error.errorClass,
          error: error.message,
          exhausted,
        };
      }
      if (backoff > 0) await sleep(backoff, context.signal);
      backoff *= 2;
    }
  }
}
