import { describe, expect, it } from 'vitest';
import { isServiceError } from '@ars/contracts';
import type { SteeringTier, TaskStatus, VerifiedIdentity } from '@ars/contracts';
import { authorizeControl } from '../../src/domain/steering.ts';
import { newTaskRecord } from '../../src/domain/start.ts';
import type { TaskRecord } from '../../src/domain/task.ts';

function task(status: TaskStatus = 'running'): TaskRecord {
  return {
    ...newTaskRecord({
      taskId: 'task-1',
      triple: { tenant: 'acme', user: 'alice', session: 's1' },
      request: { identity: {}, query: 'q' },
      agent: {},
      artifacts: [],
      now: '2030-01-01T00:00:00.000Z',
    }),
    status,
  };
}

const caller = (overrides: Partial<VerifiedIdentity> = {}): VerifiedIdentity => ({
  tenant: 'acme',
  user: 'alice',
  session: 's1',
  scopes: [],
  ...overrides,
});

function outcome(who: VerifiedIdentity, minimum: SteeringTier, t: TaskRecord | null = task()): string {
  try {
    return authorizeControl(who, t, { name: 'm', minimum });
  } catch (error) {
    if (isServiceError(error)) return error.code;
    throw error;
  }
}

describe('authorizeControl', () => {
  it.each<[string, VerifiedIdentity, SteeringTier, string]>([
    ['the owner, owner_user minimum', caller(), 'owner_user', 'owner_user'],
    ['the owner, session_user minimum', caller(), 'session_user', 'owner_user'],
    ['the owner in another session', caller({ session: 's2' }), 'owner_user', 'owner_user'],
    ['the owner, admin minimum', caller(), 'admin', 'scope_mismatch'],
    ['another user of the tenant', caller({ user: 'bob' }), 'session_user', 'scope_mismatch'],
    [
      'another user claiming console:fleet',
      caller({ user: 'bob', scopes: ['console:fleet'] }),
      'owner_user',
      'scope_mismatch',
    ],
    ['an admin of the tenant, admin minimum', caller({ user: 'root', scopes: ['admin'] }), 'admin', 'admin'],
    ['an admin of another tenant', caller({ tenant: 'other', scopes: ['admin'] }), 'owner_user', 'admin'],
    ['another tenant without admin', caller({ tenant: 'other' }), 'session_user', 'scope_mismatch'],
    [
      'another tenant with console:fleet',
      caller({ tenant: 'other', scopes: ['console:fleet'] }),
      'owner_user',
      'scope_mismatch',
    ],
  ])('%s → %s', (_who, who, minimum, expected) => {
    expect(outcome(who, minimum)).toBe(expected);
  });

  it('answers not_found for a missing task', () => {
    expect(outcome(caller({ scopes: ['admin'] }), 'owner_user', null)).toBe('not_found');
  });

  it.each<TaskStatus>(['complete', 'failed', 'cancelled'])('answers not_found for a %s task', (status) => {
    expect(outcome(caller(), 'owner_user', task(status))).toBe('not_found');
  });

  it('checks authority before liveness', () => {
    expect(outcome(caller({ user: 'bob' }), 'owner_user', task('complete'))).toBe('scope_mismatch');
  });

  it.each<TaskStatus>(['pending', 'running', 'paused'])('lets a %s task through to its inbox', (status) => {
    expect(outcome(caller(), 'owner_user', task(status))).toBe('owner_user');
  });
});
