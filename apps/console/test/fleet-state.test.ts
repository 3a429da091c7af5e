import { describe, expect, it } from 'vitest';
import type { EventFrame } from '@ars/client';
import { applyFleetFrame, fleetKey, fleetRows, tenantCount } from '../src/fleet-state.ts';
import type { FleetRow } from '../src/fleet-state.ts';

const frame = (sequence: number, type: string, tenant: string, payload: Record<string, unknown>): EventFrame => ({
  type,
  sequence,
  run: '',
  occurred_at: `2026-01-01T00:00:${String(sequence).padStart(2, '0')}Z`,
  tenant,
  user: 'u',
  session: 's',
  payload,
});

const fold = (frames: readonly EventFrame[]) =>
  frames.reduce<ReadonlyMap<string, FleetRow>>((fleet, f) => applyFleetFrame(fleet, f), new Map());

describe('fleet across tenants from agent events', () => {
  it('registers one row per tenant and agent, sorted by tenant then agent', () => {
    const fleet = fold([
      frame(1, 'agent.registered', 'tb', { AgentID: 'x', Incarnation: 0 }),
      frame(2, 'agent.registered', 'ta', { AgentID: 'y', Incarnation: 0 }),
      frame(3, 'agent.registered', 'ta', { AgentID: 'x', Incarnation: 0 }),
    ]);
    const rows = fleetRows(fleet);
    expect(rows.map((r) => `${r.tenant}/${r.agentId}/${r.state}`)).toEqual([
      'ta/x/running',
      'ta/y/running',
      'tb/x/running',
    ]);
    expect(tenantCount(rows)).toBe(2);
  });

  it('follows control commands, health and restarts', () => {
    const fleet = fold([
      frame(1, 'agent.registered', 't', { AgentID: 'a', Incarnation: 0 }),
      frame(2, 'agent.health', 't', { AgentID: 'a', Health: 'degraded' }),
      frame(3, 'agent.drained', 't', { AgentID: 'a', Command: 'drain' }),
    ]);
    expect(fleet.get(fleetKey('t', 'a'))).toMatchObject({
      state: 'draining',
      health: 'degraded',
      incarnation: 0,
      lastEvent: 'agent.drained',
    });
    const restarted = applyFleetFrame(fleet, frame(4, 'agent.restarted', 't', { AgentID: 'a', Incarnation: 1 }));
    expect(restarted.get(fleetKey('t', 'a'))).toMatchObject({ state: 'running', health: 'degraded', incarnation: 1 });
  });

  it('ignores a repeated or older frame and events of other families', () => {
    const fleet = fold([frame(5, 'agent.paused', 't', { AgentID: 'a' })]);
    expect(applyFleetFrame(fleet, frame(5, 'agent.paused', 't', { AgentID: 'a' }))).toBe(fleet);
    expect(applyFleetFrame(fleet, frame(4, 'agent.registered', 't', { AgentID: 'a' }))).toBe(fleet);
    expect(applyFleetFrame(fleet, frame(6, 'task.completed', 't', { TaskID: 'r' }))).toBe(fleet);
    expect(applyFleetFrame(fleet, frame(7, 'agent.health', 't', {}))).toBe(fleet);
  });
});
