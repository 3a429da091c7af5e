import { describe, expect, it } from 'vitest';
import { ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { createLogger } from '@ars/telemetry';
import { createSessionAdmissions } from '../../src/handlers/session-admissions.ts';
import type { StartDependencies } from '../../src/handlers/dependencies.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const caller: VerifiedIdentity = { tenant: 't', user: 'u', session: 's', scopes: [] };
const turn = { task_id: 'task-1', query: 'q' };

interface Answer {
  readonly reuseMs?: number;
  readonly error?: ServiceError;
}

/** A session service whose answers the test settles one by one. */
function fakeChecks() {
  const calls: { caller: VerifiedIdentity; settle: (answer: Answer) => void }[] = [];
  const checks: StartDependencies = {
    admitSession: (who) =>
      new Promise((resolve, reject) => {
        calls.push({
          caller: who,
          settle: (answer) =>
            answer.error ? reject(answer.error) : resolve(answer.reuseMs ? { reuseMs: answer.reuseMs } : {}),
        });
      }),
    resolveAgent: () => Promise.reject(new Error('not used')),
    resolveArtifacts: () => Promise.reject(new Error('not used')),
  };
  return { checks, calls };
}

/** Admits and answers the question at once when one is asked. */
async function admitAnswering(
  admissions: ReturnType<typeof createSessionAdmissions>,
  calls: ReturnType<typeof fakeChecks>['calls'],
  answer: Answer,
  who: VerifiedIdentity = caller,
) {
  const pending = admissions.admit(who, turn);
  await Promise.resolve();
  calls.at(-1)?.settle(answer);
  return pending;
}

describe('session admissions', () => {
  it('waits for the first admission, then reuses it within reuse_ms while still sending each one', async () => {
    let clock = 1_000;
    const { checks, calls } = fakeChecks();
    const admissions = createSessionAdmissions(checks, { logger, now: () => clock });
    await expect(admitAnswering(admissions, calls, { reuseMs: 500 })).resolves.toBe('asked');
    clock += 499;
    // Reused: resolves although the question just sent has no answer yet.
    await expect(admissions.admit(caller, turn)).resolves.toBe('reused');
    expect(calls).toHaveLength(2);
  });

  it('counts reuse_ms from when the question was sent, and asks again once it passed', async () => {
    let clock = 1_000;
    const { checks, calls } = fakeChecks();
    const admissions = createSessionAdmissions(checks, { logger, now: () => clock });
    const first = admissions.admit(caller, turn);
    clock += 300; // the answer takes 300 ms to arrive
    calls[0]!.settle({ reuseMs: 500 });
    await expect(first).resolves.toBe('asked');
    clock += 200; // 500 ms after the question
    const second = admissions.admit(caller, turn);
    let settled = false;
    void second.then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    calls[1]!.settle({ reuseMs: 500 });
    await expect(second).resolves.toBe('asked');
  });

  it('never reuses an answer without reuse_ms', async () => {
    const { checks, calls } = fakeChecks();
    const admissions = createSessionAdmissions(checks, { logger });
    await expect(admitAnswering(admissions, calls, {})).resolves.toBe('asked');
    await expect(admitAnswering(admissions, calls, {})).resolves.toBe('asked');
    expect(admissions.size).toBe(0);
  });

  it('propagates a refusal of a waited-for admission and holds nothing', async () => {
    const { checks, calls } = fakeChecks();
    const admissions = createSessionAdmissions(checks, { logger });
    const refused = admitAnswering(admissions, calls, { error: new ServiceError('session_erased', 'gone') });
    await expect(refused).rejects.toMatchObject({ code: 'session_erased' });
    expect(admissions.size).toBe(0);
  });

  it('drops the admission when a reused one is refused or fails in the background', async () => {
    for (const error of [new ServiceError('session_erased', 'gone'), new ServiceError('unavailable', 'down')]) {
      const { checks, calls } = fakeChecks();
      const admissions = createSessionAdmissions(checks, { logger });
      await admitAnswering(admissions, calls, { reuseMs: 60_000 });
      await expect(admitAnswering(admissions, calls, { error })).resolves.toBe('reused');
      await new Promise((resolve) => setImmediate(resolve));
      expect(admissions.size).toBe(0);
      await expect(admitAnswering(admissions, calls, { reuseMs: 60_000 })).resolves.toBe('asked');
    }
  });

  it('keeps sessions apart, forgets one on demand, and holds at most its capacity', async () => {
    const { checks, calls } = fakeChecks();
    const admissions = createSessionAdmissions(checks, { logger, capacity: 2 });
    const other = { ...caller, session: 'other' };
    const third = { ...caller, user: 'someone-else' };
    await admitAnswering(admissions, calls, { reuseMs: 60_000 });
    await expect(admitAnswering(admissions, calls, { reuseMs: 60_000 }, other)).resolves.toBe('asked');
    await expect(admitAnswering(admissions, calls, { reuseMs: 60_000 }, other)).resolves.toBe('reused');
    admissions.forget(other);
    await expect(admitAnswering(admissions, calls, { reuseMs: 60_000 }, other)).resolves.toBe('asked');
    await admitAnswering(admissions, calls, { reuseMs: 60_000 }, third);
    expect(admissions.size).toBe(2);
    // The oldest grant (the first caller's) went to make room.
    await expect(admitAnswering(admissions, calls, { reuseMs: 60_000 })).resolves.toBe('asked');
  });
});
