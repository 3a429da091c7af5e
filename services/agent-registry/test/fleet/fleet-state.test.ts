import { describe, expect, it } from 'vitest';
import type { AgentCommand, AgentState, FleetEntry } from '@ars/contracts';
import { healthOf, transition } from '../../src/fleet/fleet-state.ts';
import type { CommandInput } from '../../src/fleet/fleet-state.ts';

const NOW = '2026-01-02T03:04:05.000Z';

function entry(state: AgentState, overrides: Partial<FleetEntry> = {}): FleetEntry {
  return {
    tenant: 't',
    agent_id: 'a',
    registration_key: 'key',
    incarnation: 2,
    version_hash: 'sha256:old',
    started_version_hash: 'sha256:old',
    revision_id: 'r1',
    hosting: 'run-executor',
    health: 'healthy',
    state,
    registered_at: '2026-01-01T00:00:00.000Z',
    changed_at: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

function input(command: AgentCommand, overrides: Partial<CommandInput> = {}): CommandInput {
  return {
    command,
    commandId: 'c1',
    reason: 'why',
    force: false,
    inFlight: 0,
    now: NOW,
    versionHash: 'sha256:new',
    revisionId: 'r2',
    ...overrides,
  };
}

describe('fleet state machine', () => {
  it.each([
    ['running', 'drain', 'draining'],
    ['running', 'pause', 'paused'],
    ['draining', 'pause', 'paused'],
    ['running', 'force_stop', 'stopped'],
    ['paused', 'force_stop', 'stopped'],
    ['draining', 'force_stop', 'stopped'],
    ['stopped', 'deregister', 'deregistered'],
  ] as const)('moves a %s agent to %s → %s', (from, command, to) => {
    const step = transition(entry(from), input(command));
    expect(step.kind).toBe('change');
    if (step.kind !== 'change') return;
    expect(step.next.state).toBe(to);
    expect(step.next.incarnation).toBe(2);
    expect(step.next).toMatchObject({ command_id: 'c1', reason: 'why', changed_at: NOW });
  });

  it.each([
    ['draining', 'drain'],
    ['paused', 'pause'],
    ['stopped', 'force_stop'],
  ] as const)('answers a %s agent told to %s with a no-op', (from, command) => {
    expect(transition(entry(from), input(command))).toEqual({ kind: 'noop' });
  });

  it.each([
    ['paused', 'drain'],
    ['stopped', 'drain'],
    ['stopped', 'pause'],
  ] as const)('refuses a %s agent told to %s until it is restarted', (from, command) => {
    const step = transition(entry(from), input(command));
    expect(step.kind).toBe('refused');
    if (step.kind === 'refused') expect(step.message).toContain('agents.restart');
  });

  it.each(['running', 'draining', 'paused', 'stopped'] as const)(
    'restarts a %s agent as running with the next incarnation and the head version',
    (from) => {
      const step = transition(entry(from), input('restart'));
      expect(step.kind).toBe('change');
      if (step.kind !== 'change') return;
      expect(step.next).toMatchObject({
        state: 'running',
        incarnation: 3,
        version_hash: 'sha256:new',
        started_version_hash: 'sha256:new',
        revision_id: 'r2',
      });
    },
  );

  it('refuses every command to a deregistered agent', () => {
    for (const command of ['drain', 'pause', 'force_stop', 'restart', 'deregister'] as const) {
      expect(transition(entry('deregistered'), input(command)).kind).toBe('refused');
    }
  });

  it('refuses to deregister an agent with runs in flight unless forced', () => {
    const refused = transition(entry('running'), input('deregister', { inFlight: 2 }));
    expect(refused.kind).toBe('refused');
    if (refused.kind === 'refused') expect(refused.message).toContain('2 run(s)');
    const forced = transition(entry('running'), input('deregister', { inFlight: 2, force: true }));
    expect(forced.kind === 'change' && forced.next.state).toBe('deregistered');
  });
});

describe('agent health', () => {
  it('is failing from half of the judged runs failed', () => {
    expect(healthOf({ completed: 1, failed: 1, cancelled: 5 }, 'healthy')).toBe('failing');
  });

  it('is degraded from a tenth failed', () => {
    expect(healthOf({ completed: 9, failed: 1, cancelled: 0 }, 'healthy')).toBe('degraded');
  });

  it('is healthy below a tenth failed', () => {
    expect(healthOf({ completed: 20, failed: 1, cancelled: 0 }, 'failing')).toBe('healthy');
  });

  it('keeps the previous health when only cancelled runs ended', () => {
    expect(healthOf({ completed: 0, failed: 0, cancelled: 3 }, 'degraded')).toBe('degraded');
  });
});
