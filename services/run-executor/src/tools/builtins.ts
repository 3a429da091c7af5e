import { z } from 'zod';
import type { ApprovalPolicy } from '@ars/contracts';
import { ToolError, sleep } from './tool.ts';
import type { ToolDefinition } from './tool.ts';

const NEVER: ApprovalPolicy = { mode: 'never', on_timeout: 'reject' };
const ALWAYS: ApprovalPolicy = { mode: 'always', on_timeout: 'reject' };
const NO_RETRY = { maxAttempts: 1, backoffMs: 0 } as const;
const MAX_WAIT_MS = 600_000;

/** `echo`: returns its arguments as JSON. Read-only. */
const echo: ToolDefinition = {
  name: 'echo',
  description: 'Returns its arguments unchanged (as JSON).',
  transport: 'builtin',
  sideEffect: 'read_only',
  retry: { maxAttempts: 2, backoffMs: 10 },
  approval: NEVER,
  tags: ['builtin'],
  args: z.looseObject({}),
  run: async (args) => JSON.stringify(args),
};

/** `wait`: sleeps `ms` milliseconds; a hard cancel interrupts it. Read-only. */
const wait: ToolDefinition = {
  name: 'wait',
  description: 'Sleeps for `ms` milliseconds (at most 600000); honours cancellation.',
  transport: 'builtin',
  sideEffect: 'read_only',
  retry: NO_RETRY,
  approval: NEVER,
  tags: ['builtin'],
  args: z.strictObject({ ms: z.int().min(0).max(MAX_WAIT_MS) }),
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
  name: 'fail',
  description: 'Fails its first `times` attempts (default 1), then succeeds. For tests.',
  transport: 'builtin',
  sideEffect: 'idempotent',
  retry: { maxAttempts: 3, backoffMs: 5 },
  approval: NEVER,
  tags: ['builtin', 'test'],
  args: z.strictObject({
    times: z.int().min(0).default(1),
    class: z.enum(['transient', 'permanent']).default('transient'),
    message: z.string().max(1000).default('fail tool failed on purpose'),
  }),
  async run(args, context) {
    if (context.attempt <= (args.times as number)) {
      throw new ToolError(args.class as 'transient' | 'permanent', args.message as string);
    }
    return `succeeded on attempt ${context.attempt}`;
  },
};

/** `side_effect`: an unsafe action (takes `ms`, default 0). Never retried, never repeated after a crash. For tests. */
const sideEffect: ToolDefinition = {
  name: 'side_effect',
  description: 'Performs an unsafe, non-repeatable action that takes `ms` milliseconds. For tests.',
  transport: 'builtin',
  sideEffect: 'unsafe',
  retry: NO_RETRY,
  approval: NEVER,
  tags: ['builtin', 'test', 'unsafe'],
  args: z.looseObject({ ms: z.int().min(0).max(MAX_WAIT_MS).default(0) }),
  async run(args, context) {
    if ((args.ms as number) > 0) await sleep(args.ms as number, context.signal);
    return `side effect ${context.callId} done`;
  },
};

/** `sensitive_action`: an unsafe action that needs human approval before each call. */
const sensitiveAction: ToolDefinition = {
  name: 'sensitive_action',
  description: 'An unsafe action that a human must approve before it runs.',
  transport: 'builtin',
  sideEffect: 'unsafe',
  retry: NO_RETRY,
  approval: ALWAYS,
  tags: ['builtin', 'hitl', 'unsafe'],
  args: z.looseObject({}),
  run: async (_args, context) => `sensitive action ${context.callId} done`,
};

/** The built-in tools. */
export const BUILTIN_TOOLS: readonly ToolDefinition[] = [echo, wait, fail, sideEffect, sensitiveAction];
