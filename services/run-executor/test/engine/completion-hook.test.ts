import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '@ars/telemetry';
import { hookEventId, runCompletionHook } from '../../src/engine/completion-hook.ts';
import type { CompletionHook, HookRun } from '../../src/engine/completion-hook.ts';
import { ToolError } from '../../src/tools/tool.ts';
import type { ToolDefinition } from '../../src/tools/tool.ts';

const log = createLogger({ name: 'hook-test', level: 'silent' });
const run: HookRun = {
  taskId: 'task-1',
  owner: { tenant: 't', user: 'u', session: 's' },
  outcome: 'failed',
  answer: undefined,
  transcript: [{ role: 'user', content: 'hi' }],
};

function hookOf(body: ToolDefinition['run']): CompletionHook {
  const tool: ToolDefinition = {
    name: 'hook',
    description: 'test hook',
    transport: 'builtin',
    sideEffect: 'read_only',
    retry: { maxAttempts: 1, backoffMs: 0 },
    approval: { mode: 'never' } as ToolDefinition['approval'],
    tags: [],
    args: z.looseObject({}),
    run: body,
  };
  return { name: 'hook', tool };
}

async function emitted(hook: CompletionHook, timeoutMs = 1_000) {
  const events: { type: string; payload: Record<string, unknown>; eventId: string }[] = [];
  const emit = async (type: string, payload: Record<string, unknown>, eventId: string) => {
    events.push({ type, payload, eventId });
  };
  await runCompletionHook(hook, run, { emit, timeoutMs, log });
  return events;
}

describe('runCompletionHook', () => {
  it('abandons a hook past its timeout and aborts its signal', async () => {
    let aborted = false;
    const slow = hookOf(
      (_args, context) =>
        new Promise((resolve) => {
          context.signal.addEventListener('abort', () => {
            aborted = true;
            resolve('late');
          });
        }),
    );
    const events = await emitted(slow, 50);
    expect(events).toEqual([
      {
        type: 'run.hook_failed',
        payload: { Tool: 'hook', Outcome: 'failed', ErrorClass: 'timeout' },
        eventId: hookEventId('task-1'),
      },
    ]);
    expect(aborted).toBe(true);
  });

  it("reports a throwing hook with its tool error's class", async () => {
    const events = await emitted(
      hookOf(async () => {
        throw new ToolError('permanent', 'no');
      }),
    );
    expect(events.map((e) => e.payload.ErrorClass)).toEqual(['permanent']);
  });

  it('hands the hook the run, its outcome and its transcript', async () => {
    let seen: Record<string, unknown> = {};
    const events = await emitted(
      hookOf(async (args) => {
        seen = args;
        return 'ok';
      }),
    );
    expect(seen).toEqual({ task_id: 'task-1', outcome: 'failed', answer: '', transcript: run.transcript });
    expect(events[0]?.type).toBe('run.hook_dispatched');
    expect(events[0]?.payload).toMatchObject({ EntryCount: 1, TranscriptBytes: JSON.stringify(run.transcript).length });
  });

  it('never throws when its event cannot be published', async () => {
    const emit = async () => {
      throw new Error('stream down');
    };
    await expect(
      runCompletionHook(
        hookOf(async () => 'ok'),
        run,
        { emit, timeoutMs: 100, log },
      ),
    ).resolves.toBeUndefined();
  });
});
