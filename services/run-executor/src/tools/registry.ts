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
  /**
   * The tools' specs, in order. The same list of tools gives the same array
   * (runs of an agent share it, and with it the context estimate's JSON of
   * it, made once per array): never to be changed.
   */
  specs(tools: readonly ToolDefinition[]): readonly ToolSpec[];
  /**
   * This registry's tools and a run's own (its agent's MCP tools), with the
   * tenant's approval policies applied over both (see {@link createToolRegistry}).
   * A run tool whose name a tool of this registry has is left out.
   */
  forRun(runTools: readonly ToolDefinition[], tenantPolicies: Readonly<Record<string, ApprovalPolicy>>): ToolRegistry;
}

type Policies = Readonly<Record<string, ApprovalPolicy>>;

/**
 * Creates a registry. A tool's approval policy is, from the lowest
 * precedence to the highest: the tool's own (a built-in's manifest, an MCP
 * tool's catalogue entry), then `approvalOverrides` (the executor's
 * `TOOL_APPROVAL_POLICIES`), then the tenant's (`tools.set_approval_policy`,
 * given per run to {@link ToolRegistry.forRun}).
 */
export function createToolRegistry(tools: readonly ToolDefinition[], approvalOverrides: Policies = {}): ToolRegistry {
  // Generated specs are the same for every run: shared by the registries of runs.
  return buildRegistry(tools, [approvalOverrides], { byName: new Map(), lists: new Map() }, approvalOverrides);
}

/** Lists of specs kept at most; past it they are all dropped (an executor's agents expose far fewer). */
const MAX_SPEC_LISTS = 256;

/** Specs made once: each generated one by tool name, and each list by its tools' names. */
interface SpecCache {
  readonly byName: Map<string, ToolSpec>;
  readonly lists: Map<string, readonly ToolSpec[]>;
}

/** The specs of `list`: the kept array when it holds the very same specs, else a new one, kept. */
function specsOf(list: readonly ToolDefinition[], cache: SpecCache): readonly ToolSpec[] {
  const specs = list.map((tool) => specOf(tool, cache.byName));
  const key = specs.map((spec) => spec.name).join('\n');
  const kept = cache.lists.get(key);
  if (kept !== undefined && kept.every((spec, i) => spec === specs[i])) return kept;
  if (cache.lists.size >= MAX_SPEC_LISTS) cache.lists.clear();
  cache.lists.set(key, specs);
  return specs;
}

function buildRegistry(
  declared: readonly ToolDefinition[],
  layers: readonly Policies[],
  specCache: SpecCache,
  executorPolicies: Policies,
): ToolRegistry {
  const byName = new Map<string, ToolDefinition>();
  for (const tool of declared) {
    if (byName.has(tool.name)) continue;
    let approval = tool.approval;
    for (const layer of layers) approval = layer[tool.name] ?? approval;
    byName.set(tool.name, approval === tool.approval ? tool : { ...tool, approval });
  }
  return {
    get: (name) => byName.get(name),
    exposed(exposure): ToolDefinition[] {
      const all = [...byName.values()];
      if (exposure === undefined || exposure.mode === 'all') return all;
      const listed = new Set(exposure.tools);
      return all.filter((t) => (exposure.mode === 'allow_list' ? listed.has(t.name) : !listed.has(t.name)));
    },
    specs: (list) => specsOf(list, specCache),
    forRun: (runTools, tenantPolicies) =>
      buildRegistry([...declared, ...runTools], [executorPolicies, tenantPolicies], specCache, executorPolicies),
  };
}

function specOf(tool: ToolDefinition, cache: Map<string, ToolSpec>): ToolSpec {
  // A declared schema is the server's, as given (and differs between runs of different agents): never cached by name.
  if (tool.parameters !== undefined) {
    return { name: tool.name, description: tool.description, parameters: { ...tool.parameters } };
  }
  let spec = cache.get(tool.name);
  if (spec === undefined) {
    const parameters = z.toJSONSchema(tool.args, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    delete parameters.$schema;
    spec = { name: tool.name, description: tool.description, parameters };
    cache.set(tool.name, spec);
  }
  return spec;
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
      /** The last attempt's error (its cause tells, for example, an MCP host's refusal). */
      readonly lastError: ToolError;
    };

function asToolError(error: unknown, signal: AbortSignal): ToolError {
  if (error instanceof ToolError) return error;
  if (signal.aborted) return new ToolError('cancelled', 'aborted');
  return new ToolError('permanent', error instanceof Error ? error.message : String(error));
}

/**
 * Runs a call with the tool's retry policy: a retryable failure is retried
 * after a doubling backoff until `maxAttempts`; `onAttemptFailed` sees every
 * failed attempt. An aborted signal ends the call at once (thrown ToolError
 * `cancelled`); a `cancelled` failure without it (a tool host that cancelled
 * the call) is not retried.
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
      // Aborted by the run: it stops here. A call cancelled by someone else is a failure like any other.
      if (context.signal.aborted)
        throw error.errorClass === 'cancelled' ? error : new ToolError('cancelled', 'aborted');
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
          lastError: error,
        };
      }
      if (backoff > 0) await sleep(backoff, context.signal);
      backoff *= 2;
    }
  }
}
