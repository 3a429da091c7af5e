import { getBuiltinToolManifest } from '@ars/contracts';
import type { BuiltinToolManifest } from '@ars/contracts';
import { ToolError, sleep } from './tool.ts';
import type { ToolDefinition } from './tool.ts';

const NO_RETRY = { maxAttempts: 1, backoffMs: 0 } as const;

/** The declared part of a tool (`@ars/contracts`' built-in manifest) as the engine holds it. */
type Declared = Pick<
  ToolDefinition,
  'name' | 'description' | 'transport' | 'sideEffect' | 'approval' | 'tags' | 'args'
>;

/**
 * The declaration of built-in tool `name` from its manifest; `args` replaces
 * the manifest's argument schema when the deployment narrows its bounds.
 */
export function declaredBuiltin(name: string, args?: BuiltinToolManifest['args']): Declared {
  const manifest = getBuiltinToolManifest(name);
  if (manifest === undefined) throw new Error(`built-in tool ${name} has no manifest in @ars/contracts`);
  return {
    name: manifest.name,
    description: manifest.description,
    transport: manifest.transport,
    sideEffect: manifest.side_effect,
    approval: manifest.approval_policy,
    tags: manifest.tags,
    args: args ?? manifest.args,
  };
}

/** `echo`: returns its arguments as JSON. Read-only. */
const echo: ToolDefinition = {
  ...declaredBuiltin('echo'),
  retry: { maxAttempts: 2, backoffMs: 10 },
  run: async (args) => JSON.stringify(args),
};

/** `wait`: sleeps `ms` milliseconds; a hard cancel interrupts it. Read-only. */
const wait: ToolDefinition = {
  ...declaredBuiltin('wait'),
  retry: NO_RETRY,
  async run(args, context) {
    await sleep(args.ms as number, context.signal);
    return `waited ${String(args.ms)} ms`;
  },
};

/**
 * `fail`: its first `times` attempts of a call fail (transient), then it
 * succeeds; with `times` ≥ 3 the retry policy (3 attempts) is exhausted.
 * `class: "permanent"` fails without retry. Idempotent. For tests.
 */
const fail: ToolDefinition = {
  ...declaredBuiltin('fail'),
  retry: { maxAttempts: 3, backoffMs: 5 },
  async run(args, context) {
    if (context.attempt <= (args.times as number)) {
      throw new ToolError(args.class as 'transient' | 'permanent', args.message as string);
    }
    return `succeeded on attempt ${context.attempt}`;
  },
};

/** `side_effect`: an unsafe action (takes `ms`, default 0). Never retried, never repeated after a crash. For tests. */
const sideEffect: ToolDefinition = {
  ...declaredBuiltin('side_effect'),
  retry: NO_RETRY,
  async run(args, context) {
    if ((args.ms as number) > 0) await sleep(args.ms as number, context.signal);
    return `side effect ${context.callId} done`;
  },
};

/** `sensitive_action`: an unsafe action that needs human approval before each call. */
const sensitiveAction: ToolDefinition = {
  ...declaredBuiltin('sensitive_action'),
  retry: NO_RETRY,
  run: async (_args, context) => `sensitive action ${context.callId} done`,
};

/** The built-in tools. */
export const BUILTIN_TOOLS: readonly ToolDefinition[] = [echo, wait, fail, sideEffect, sensitiveAction];
