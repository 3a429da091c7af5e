import { describe, expect, it } from 'vitest';
import type { PauseRecord } from '../../src/domain/pause.ts';
import { openControlInbox } from '../../src/engine/controls.ts';
import { RunSignals } from '../../src/engine/run-signals.ts';
import type { RunState, Verdict } from '../../src/engine/run-state.ts';

/**
 * The control inbox against a stand-in run: what a control decides depends
 * on what was pending when the inbox received it, whatever the run did
 * while the control waited in line.
 */

const encoder = new TextEncoder();

interface Emitted {
  readonly type: string;
  readonly payload: Record<string, unknown>;
}

function approvalRecord(token: string): PauseRecord {
  return {
    _id: token,
    token,
    task_id: 'task-1',
    tenant: 't',
    user: 'u',
    session: 's',
    kind: 'approval',
    reason: 'tool sensitive_action requires human approval',
    tool: 'sensitive_action',
    requested_at: new Date().toISOString(),
  };
}

/** A run waiting for approval `first`; settling it makes `second` pending, as the run's next gated call does. */
function standInRun() {
  const emitted: Emitted[] = [];
  const verdicts: Array<{ token: string; verdict: Verdict }> = [];
  const resolved = new Set<string>();
  let deliver: ((msg: { data: Uint8Array; respond: (data: Uint8Array) => boolean }) => void) | undefined;
  const lease = { held: true };
  const run = {
    taskId: 'task-1',
    owner: { tenant: 't', user: 'u', session: 's' },
    signals: new RunSignals('task-1', { holdsLease: () => lease.held }),
    pause: undefined,
    restoredApproval: undefined,
    resolvedTokens: new Set<string>(),
    approval: undefined as RunState['approval'],
    auth: undefined as RunState['auth'],
    authPauses: new Map<string, PauseRecord>(),
    controls: Promise.resolve(),
    log: { warn: () => undefined, error: () => undefined },
    events: { emit: (type: string, payload: Record<string, unknown>) => void emitted.push({ type, payload }) },
    deps: {
      bus: {
        nc: {
          subscribe: (_subject: string, options: { callback: (error: null, msg: never) => void }) => {
            deliver = (msg) => options.callback(null, msg as never);
            return {};
          },
        },
      },
      runStates: {
        recordControl: async (): Promise<boolean> => true,
        resolvePause: async (token: string) => {
          if (resolved.has(token)) return null;
          resolved.add(token);
          return approvalRecord(token);
        },
      },
    },
  };
  const waitFor = (token: string, then?: () => void) => {
    run.approval = {
      record: approvalRecord(token),
      settle: (verdict) => {
        run.approval = undefined;
        verdicts.push({ token, verdict });
        then?.();
      },
    };
  };
  waitFor('first', () => waitFor('second'));
  openControlInbox(run as unknown as RunState);
  const send = (method: string, payload: Record<string, unknown>, eventId: string) =>
    deliver?.({
      data: encoder.encode(JSON.stringify({ method, payload, event_id: eventId, caller_tier: 'owner_user' })),
      respond: () => true,
    });
  return { run, lease, emitted, verdicts, send };
}

describe('control inbox', () => {
  it('decides a tokenless approve on the approval pending when it was received, never on a later one', async () => {
    const { run, emitted, verdicts, send } = standInRun();
    send('approve', {}, 'a');
    send('approve', {}, 'b');
    send('approve', {}, 'c');
    await run.controls;
    expect(verdicts).toEqual([{ token: 'first', verdict: 'approve' }]);
    expect(run.approval?.record.token).toBe('second');
    expect(emitted.filter((e) => e.type === 'control.applied').map((e) => e.payload.Outcome)).toEqual(['approved']);
    expect(emitted.filter((e) => e.type === 'control.rejected').map((e) => e.payload.Reason)).toEqual([
      'already_resolved',
      'already_resolved',
    ]);
    expect(emitted.filter((e) => e.type === 'tool.approved').map((e) => e.payload.PauseToken)).toEqual(['first']);
  });

  it('decides a tokenless reject received before the next approval on the earlier one', async () => {
    const { run, emitted, verdicts, send } = standInRun();
    send('approve', {}, 'a');
    send('reject', {}, 'b');
    await run.controls;
    expect(verdicts).toEqual([{ token: 'first', verdict: 'approve' }]);
    expect(emitted.filter((e) => e.type === 'control.rejected').map((e) => e.payload)).toEqual([
      { Type: 'reject', Reason: 'already_resolved', CallerScope: 'owner_user' },
    ]);
  });

  it('lets a control received once the next approval is pending decide that one', async () => {
    const { run, verdicts, send } = standInRun();
    send('approve', {}, 'a');
    await run.controls;
    send('approve', {}, 'b');
    await run.controls;
    expect(verdicts.map((v) => v.token)).toEqual(['first', 'second']);
  });

  it('narrates a control whose event_id cannot be recorded as received, then rejected internal', async () => {
    const { run, emitted, verdicts, send } = standInRun();
    run.deps.runStates.recordControl = () => Promise.reject(new Error('the store is down'));
    send('approve', {}, 'a');
    await run.controls;
    expect(verdicts).toEqual([]);
    expect(emitted).toEqual([
      { type: 'control.received', payload: { Type: 'approve', Outcome: 'received', Err: '' } },
      { type: 'control.rejected', payload: { Type: 'approve', Reason: 'internal', CallerScope: 'owner_user' } },
    ]);
  });
  it('neither records nor narrates a control once the run is no longer held here (its lease gone stale)', async () => {
    const { run, lease, emitted, verdicts, send } = standInRun();
    let recorded = 0;
    run.deps.runStates.recordControl = async () => {
      recorded++;
      return true;
    };
    lease.held = false;
    send('approve', {}, 'a');
    await run.controls;
    expect(recorded).toBe(0);
    expect(verdicts).toEqual([]);
    expect(emitted).toEqual([]);
  });
});
