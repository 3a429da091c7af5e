import { describe, expect, it } from 'vitest';
import { ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { createMemoryLogger } from '@ars/telemetry';
import { createSessionAdmissions } from '../../src/handlers/session-admissions.ts';
import type { StartDependencies } from '../../src/handlers/dependencies.ts';
import type { SessionOwner } from '../../src/domain/session-key.ts';

const caller: VerifiedIdentity = { tenant: 't', user: 'u', session: 's', scopes: [] };
const turn = { task_id: 'task-1', query: 'q' };

/** A session service whose answers the test settles one by one. */
function fakeChecks() {
  const calls: { caller: VerifiedIdentity; turn: unknown; settle: (error?: ServiceError) => void }[] = [];
  const checks: StartDependencies = {
    admitSession: (who, asked) =>
      new Promise((resolve, reject) => {
        calls.push({ caller: who, turn: asked, settle: (error) => (error ? reject(error) : resolve({})) });
      }),
    resolveAgent: () => Promise.reject(new Error('not used')),
    resolveArtifacts: () => Promise.reject(new Error('not used')),
  };
  return { checks, calls };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('session admissions', () => {
  it('sends each admission with its turn and returns before the session service answers', () => {
    const { checks, calls } = fakeChecks();
    const admissions = createSessionAdmissions(checks, {
      logger: createMemoryLogger('t').logger,
      onErased: async () => {},
    });
    expect(admissions.admit(caller, turn)).toBeUndefined();
    admissions.admit(caller, { task_id: 'task-2', query: 'q2' });
    expect(calls.map((c) => c.turn)).toEqual([turn, { task_id: 'task-2', query: 'q2' }]);
    expect(calls[0]?.caller).toEqual(caller);
  });

  it('records the session as erased when the session service refuses it session_erased', async () => {
    const { checks, calls } = fakeChecks();
    const erased: SessionOwner[] = [];
    const admissions = createSessionAdmissions(checks, {
      logger: createMemoryLogger('t').logger,
      onErased: async (triple) => {
        erased.push(triple);
      },
    });
    admissions.admit(caller, turn);
    calls[0]?.settle(new ServiceError('session_erased', 'erased'));
    await settled();
    expect(erased).toEqual([{ tenant: 't', user: 'u', session: 's' }]);
  });

  it('only logs any other failure: the session is opened from the event stream', async () => {
    const { checks, calls } = fakeChecks();
    const erased: SessionOwner[] = [];
    const memory = createMemoryLogger('t');
    const admissions = createSessionAdmissions(checks, {
      logger: memory.logger,
      onErased: async (triple) => {
        erased.push(triple);
      },
    });
    admissions.admit(caller, turn);
    calls[0]?.settle(new ServiceError('unavailable', 'session service away'));
    await settled();
    expect(erased).toEqual([]);
    expect(memory.lines().some((line) => String(line['msg']).includes('background session admission failed'))).toBe(
      true,
    );
  });

  it('survives a marker that cannot be written (logged, never an unhandled rejection)', async () => {
    const { checks, calls } = fakeChecks();
    const memory = createMemoryLogger('t');
    const admissions = createSessionAdmissions(checks, {
      logger: memory.logger,
      onErased: () => Promise.reject(new Error('store down')),
    });
    admissions.admit(caller, turn);
    calls[0]?.settle(new ServiceError('session_erased', 'erased'));
    await settled();
    expect(memory.lines().some((line) => String(line['msg']).includes('could not record the erased session'))).toBe(
      true,
    );
  });
});
