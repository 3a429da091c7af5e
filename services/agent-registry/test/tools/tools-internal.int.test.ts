import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLS_CATALOGUE, TOOLS_RECORD_CALLS, ToolsCatalogueReply } from '@ars/contracts';
import { callInternal } from '@ars/bus';
import { hostTool, startToolsHarness } from './helpers/tools-harness.ts';
import type { ToolsHarness } from './helpers/tools-harness.ts';

const ALWAYS = { mode: 'always', on_timeout: 'reject' } as const;
const NEVER = { mode: 'never', on_timeout: 'reject' } as const;
const CALL = {
  tool: 'echo',
  transport: 'builtin',
  source: 'builtin',
  outcome: 'completed',
  approval_requested: false,
  attempts: 1,
  duration_ms: 3,
  bytes_in: 2,
  bytes_out: 2,
  artifacts_offloaded: 0,
  at: '2030-01-01T10:00:00Z',
};

describe('_tools.catalogue and _tools.record_calls', () => {
  let h: ToolsHarness;

  beforeAll(async () => {
    h = await startToolsHarness('internal');
  });

  afterAll(async () => {
    await h?.stop();
  });

  /** A run owner (no scopes, as the engine calls) whose tenant's `helper` agent has a filesystem server. */
  function owner() {
    const who = h.caller([]);
    h.setAgents(who.tenant, [
      {
        agent_id: 'helper',
        tools: [hostTool('fs', 'read_file', { side_effect: 'read_only' }), hostTool('fs', 'write_file')],
        unavailable_servers: [{ server_id: 'gh', state: 'failed', reason: 'connection refused' }],
      },
    ]);
    return who;
  }
  const triple = (who: ReturnType<ToolsHarness['caller']>) => ({
    tenant: who.tenant,
    user: who.user,
    session: who.session,
  });

  describe('_tools.catalogue', () => {
    it("answers the agent's MCP tools, unavailable servers and the tenant's overrides (built-ins included)", async () => {
      const who = owner();
      const admin = h.caller(['admin'], who.tenant);
      await h.call('tools.set_approval_policy', { name: 'fs__write_file', policy: ALWAYS }, admin);
      await h.call('tools.set_approval_policy', { name: 'sensitive_action', policy: NEVER }, admin);
      const reply = await callInternal(h.service.rpc, TOOLS_CATALOGUE, who, { ...triple(who), agent_id: 'helper' });
      expect(ToolsCatalogueReply.safeParse(reply).success).toBe(true);
      expect(reply.tools.map((t) => [t.name, t.side_effect, t.approval_policy.mode])).toEqual([
        ['fs__read_file', 'read_only', 'never'],
        ['fs__write_file', 'unsafe', 'always'],
      ]);
      expect(reply.approval_policies).toEqual({ fs__write_file: ALWAYS, sensitive_action: NEVER });
      expect(reply.unavailable_servers).toEqual([{ server_id: 'gh', state: 'failed', reason: 'connection refused' }]);
    });

    it('answers the default agent when agent_id is absent', async () => {
      const who = owner();
      const reply = await callInternal(h.service.rpc, TOOLS_CATALOGUE, who, triple(who));
      expect(reply).toEqual({ tools: [], approval_policies: {}, unavailable_servers: [], auth_required: [] });
    });

    it('refuses an agent the tenant cannot start with unknown_agent', async () => {
      const who = owner();
      await expect(
        callInternal(h.service.rpc, TOOLS_CATALOGUE, who, { ...triple(who), agent_id: 'ghost' }),
      ).rejects.toMatchObject({ code: 'invalid_request', reason: 'unknown_agent' });
    });

    it("refuses a body naming another tenant than the caller's with scope_mismatch", async () => {
      const who = owner();
      const outcome = await h.internal(TOOLS_CATALOGUE.name, { ...triple(who), tenant: 'elsewhere' }, who);
      expect(outcome).toMatchObject({ ok: false, code: 'scope_mismatch' });
    });

    it('refuses a bad body with invalid_request', async () => {
      const who = owner();
      const outcome = await h.internal(TOOLS_CATALOGUE.name, { tenant: who.tenant }, who);
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    });
  });

  describe('_tools.record_calls', () => {
    it('answers how many calls it recorded', async () => {
      const who = h.caller([]);
      const reply = await callInternal(h.service.rpc, TOOLS_RECORD_CALLS, who, {
        tenant: who.tenant,
        calls: [CALL, { ...CALL, outcome: 'failed' }] as never,
      });
      expect(reply).toEqual({ recorded: 2 });
    });

    it('counts a batch id once: a repeated batch answers duplicate and adds nothing', async () => {
      const who = h.caller([]);
      const batch = { tenant: who.tenant, calls: [CALL, CALL] as never, batch_id: 'executor-1:batch-7' };
      expect(await callInternal(h.service.rpc, TOOLS_RECORD_CALLS, who, batch)).toEqual({ recorded: 2 });
      expect(await callInternal(h.service.rpc, TOOLS_RECORD_CALLS, who, batch)).toEqual({
        recorded: 0,
        duplicate: true,
      });
      const other = { ...batch, batch_id: 'executor-1:batch-8' };
      expect(await callInternal(h.service.rpc, TOOLS_RECORD_CALLS, who, other)).toEqual({ recorded: 2 });
      const metrics = await h.call<{ items: { tool: string; invocations: number }[] }>('tools.metrics', {}, who);
      expect(metrics.items).toEqual([expect.objectContaining({ tool: 'echo', invocations: 4 })]);
      // Batch ids are per tenant: another tenant's batch of the same id counts.
      const neighbour = h.caller([]);
      const theirs = { ...batch, tenant: neighbour.tenant };
      expect(await callInternal(h.service.rpc, TOOLS_RECORD_CALLS, neighbour, theirs)).toEqual({ recorded: 2 });
    });

    it('counts a batch sent twice at once only once', async () => {
      const who = h.caller([]);
      const batch = { tenant: who.tenant, calls: [CALL] as never, batch_id: 'race' };
      const answers = await Promise.all(
        [1, 2, 3].map(() => callInternal(h.service.rpc, TOOLS_RECORD_CALLS, who, batch)),
      );
      expect(answers.map((a) => a.recorded).sort()).toEqual([0, 0, 1]);
      const metrics = await h.call<{ items: { invocations: number }[] }>('tools.metrics', {}, who);
      expect(metrics.items[0]?.invocations).toBe(1);
    });

    it("refuses a body naming another tenant than the caller's with scope_mismatch, recording nothing", async () => {
      const who = h.caller([]);
      const victim = h.caller([]);
      const outcome = await h.internal(TOOLS_RECORD_CALLS.name, { tenant: victim.tenant, calls: [CALL] }, who);
      expect(outcome).toMatchObject({ ok: false, code: 'scope_mismatch' });
      const metrics = await h.call<{ items: unknown[] }>('tools.metrics', {}, victim);
      expect(metrics.items).toEqual([]);
    });

    it.each([
      [{ calls: [] }],
      [{ calls: [{ ...CALL, outcome: 'exploded' }] }],
      [{ calls: [{ ...CALL, duration_ms: -1 }] }],
      [{ calls: [{ ...CALL, at: 'yesterday' }] }],
    ])('refuses the bad body %j with invalid_request', async (body) => {
      const who = h.caller([]);
      const outcome = await h.internal(TOOLS_RECORD_CALLS.name, { tenant: who.tenant, ...body }, who);
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    });
  });
});
