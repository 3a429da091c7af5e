import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_CHANGED_SUBJECT, connectBus } from '@ars/bus';
import type { Bus } from '@ars/bus';
import type { VerifiedIdentity } from '@ars/contracts';
import { startHarness } from './helpers/harness.ts';
import type { Harness } from './helpers/harness.ts';

/**
 * Executors keep resolved configurations until a change is announced
 * (`ars.cfg.changed`): every write to what `_agent.effective_config`
 * resolves from must be announced, and nothing else.
 */
describe('configuration change notices', () => {
  let h: Harness;
  let watcher: Bus;
  const notices: string[] = [];

  beforeAll(async () => {
    h = await startHarness('config-changes');
    watcher = await connectBus({ servers: h.natsUrl, name: 'config-change-watcher' });
    watcher.nc.subscribe(CONFIG_CHANGED_SUBJECT, {
      callback: (error, msg) => {
        if (error === null) notices.push(new TextDecoder().decode(msg.data));
      },
    });
    await watcher.nc.flush();
  });

  afterAll(async () => {
    await watcher?.close();
    await h?.stop();
  });

  /** The notices `write` caused: waits for one at most 2 s, then for stragglers 50 ms. */
  async function announcedBy(write: () => Promise<unknown>): Promise<string[]> {
    const from = notices.length;
    await write();
    const deadline = Date.now() + 2_000;
    while (notices.length === from && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    return notices.slice(from);
  }

  const effective = (who: VerifiedIdentity, agentId = 'helper') =>
    h.service.rpc.call('agent-registry', '_agent.effective_config', who, {
      tenant: who.tenant,
      user: who.user,
      session: who.session,
      agent_id: agentId,
    });

  it('announces each kind of write a configuration is resolved from, naming agent-registry', async () => {
    const admin = h.caller(['admin', 'agent_config:user']);
    const writes: [string, () => Promise<unknown>][] = [
      ['agent revision', () => h.call('agent_config.set_revision', { agent_id: 'helper', config: {} }, admin)],
      [
        'user variant',
        () => h.call('agent_config.user.set_revision', { agent_id: 'helper', config: { skills: [] } }, admin),
      ],
      ['session settings', () => h.call('agent_config.session.set_user_prompt', { prompt: 'p' }, admin)],
      ['tenant skill', () => h.call('agent_config.skills.upsert', { skill: { name: 's', content: 'c' } }, admin)],
      [
        'approval policy',
        () =>
          h.call('tools.set_approval_policy', { name: 'echo', policy: { mode: 'always', timeout_seconds: 60 } }, admin),
      ],
      ['retirement', () => h.call('agent_config.retire', { agent_id: 'helper' }, admin)],
    ];
    for (const [what, write] of writes) {
      const announced = await announcedBy(write);
      expect(announced.length, what).toBeGreaterThan(0);
      expect(new Set(announced), what).toEqual(new Set(['agent-registry']));
    }
  });

  it('announces nothing for reads, a resolution among them', async () => {
    const admin = h.caller(['admin', 'agent_config:user']);
    await h.call('agent_config.set_revision', { agent_id: 'helper', config: {} }, admin);
    const from = notices.length;
    await effective(admin);
    await h.call('agent_config.get', { agent_id: 'helper' }, admin);
    await new Promise((r) => setTimeout(r, 100));
    expect(notices.slice(from)).toEqual([]);
  });
});
