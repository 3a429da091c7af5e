import { randomUUID } from 'node:crypto';
import type { PauseRecord } from '../domain/pause.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { routePausePayload } from './pause-payload.ts';
import { argsSummary } from './planner.ts';
import { occurredAt } from './run-events.ts';
import type { RunState, Verdict } from './run-state.ts';

/**
 * Human approval of a tool call whose policy asks for it: a pause record
 * (kind `approval`, what `pause.list` shows), `tool.approval_requested` and
 * `pause.requested`, then a wait that an approve or reject control ends
 * (see controls.ts), or the policy's timeout (`on_timeout`), or a
 * cancellation or drain (`stop`). An approval still open when the run moved
 * executors is reused for the same tool, keeping its token.
 */

/** Parks the run until a human approves or rejects the call (or its policy's timeout decides). */
export async function awaitApproval(
  run: RunState,
  tool: ToolDefinition,
  args: Record<string, unknown>,
): Promise<Verdict> {
  let record = run.restoredApproval;
  run.restoredApproval = undefined;
  if (record !== undefined && record.tool !== tool.name) {
    await run.deps.runStates.resolvePause(record.token, run.taskId, 'superseded', occurredAt());
    record = undefined;
  }
  if (record === undefined) record = await requestApproval(run, tool, args);
  if (run.signals.draining) {
    run.signals.requestHandback();
    return 'stop';
  }
  const pending = record;
  const verdict = new Promise<Verdict>((resolve) => {
    const settle = (v: Verdict): void => {
      run.approval = undefined;
      release();
      clearTimeout(run.approvalTimer);
      resolve(v);
    };
    // A cancellation, a drain or a lost lease ends the wait with `stop`.
    const release = run.signals.holdHumanWait(() => settle('stop'));
    run.approval = { record: pending, settle };
  });
  if (pending.expires_at !== undefined) {
    const delay = Math.max(0, Date.parse(pending.expires_at) - Date.now());
    run.approvalTimer = setTimeout(() => void approvalTimedOut(run, tool, pending), delay);
  }
  return verdict;
}

async function requestApproval(
  run: RunState,
  tool: ToolDefinition,
  args: Record<string, unknown>,
): Promise<PauseRecord> {
  const token = randomUUID();
  const reason = `tool ${tool.name} requires human approval`;
  const requestedAt = new Date();
  const timeout = tool.approval.timeout_seconds;
  const record: PauseRecord = {
    _id: token,
    token,
    task_id: run.taskId,
    ...run.owner,
    kind: 'approval',
    reason,
    tool: tool.name,
    tags: [...tool.tags],
    args_summary: await routePausePayload(run, token, args, argsSummary(args)),
    requested_at: requestedAt.toISOString(),
    ...(timeout === undefined ? {} : { expires_at: new Date(requestedAt.getTime() + timeout * 1000).toISOString() }),
  };
  run.signals.assertLease();
  await run.deps.runStates.createPause(record);
  run.pausesOpened = true;
  run.events.emit('tool.approval_requested', {
    Tool: tool.name,
    PauseToken: token,
    Reason: reason,
    Tags: [...tool.tags],
    ArgsSummary: record.args_summary,
  });
  run.events.emit('pause.requested', { Token: token, Reason: reason });
  return record;
}

async function approvalTimedOut(run: RunState, tool: ToolDefinition, record: PauseRecord): Promise<void> {
  const approve = tool.approval.on_timeout === 'approve';
  try {
    const resolved = await run.deps.runStates.resolvePause(
      record.token,
      run.taskId,
      approve ? 'timeout_approve' : 'timeout_reject',
      occurredAt(),
    );
    if (resolved === null || run.approval?.record.token !== record.token) return;
    run.resolvedTokens.add(record.token);
    const reason = 'approval timed out';
    if (approve) {
      run.events.emit('tool.approved', { Tool: tool.name, PauseToken: record.token, ApproverReason: reason });
    } else {
      run.events.emit('tool.rejected', { Tool: tool.name, PauseToken: record.token, Reason: reason });
    }
    run.events.emit('pause.resumed', {
      Token: record.token,
      Reason: reason,
      Decision: approve ? 'approve' : 'reject',
    });
    run.approval?.settle(approve ? 'approve' : 'timeout_reject');
  } catch (error) {
    run.log.warn({ err: error }, 'approval timeout could not be applied');
  }
}
