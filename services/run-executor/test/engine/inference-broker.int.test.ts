import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { FAKE_OPENAI_BEHAVIOURS, startCredentialBroker, startFakeOpenAi } from '@ars/testkit';
import type { FakeOpenAi, TestCredentialBroker } from '@ars/testkit';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness } from './harness.ts';

/**
 * An agent whose openai provider names an `inference_broker` gets its API
 * key from that broker (the testkit's, on loopback) at each call, cached
 * until shortly before it expires, and each fetch is narrated as
 * `llm.provider_credential_fetched`. The provider is the fake
 * OpenAI-compatible server, which records the key each call carried.
 */

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);
const fingerprint = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 12);
const FETCHED = 'llm.provider_credential_fetched';

describe('inference brokers', { timeout: 30_000 }, () => {
  let h: EngineHarness;
  let fake: FakeOpenAi;
  let broker: TestCredentialBroker;

  beforeAll(async () => {
    [fake, broker] = await Promise.all([startFakeOpenAi(), startCredentialBroker()]);
    h = await startEngineHarness({ LLM_TIMEOUT_MS: '5000', INSTANCE_ID: 'executor-7' });
    // Each agent names its own installation: a failover chain is set per installation name.
    for (const name of ['brokered', 'brokered-failover']) {
      h.agentConfigs.set(name, {
        llm_provider: {
          provider_name: name,
          provider: 'openai',
          base_url: fake.url(FAKE_OPENAI_BEHAVIOURS.toolThenAnswer),
          model: 'test-model',
          inference_broker: broker.url,
        },
      });
    }
    h.governance.failovers.set('brokered-failover', { name: 'backup', kind: 'scripted' });
  });

  afterEach(() => {
    broker.expiresInSeconds = 3_600;
  });

  afterAll(async () => {
    await h?.stop();
    await Promise.all([fake?.stop(), broker?.stop()]);
  });

  async function run(caller: VerifiedIdentity, agentId = 'brokered') {
    const { taskId, watch } = await h.start(caller, { query: 'say hello', agent_id: agentId });
    // A run the broker failed transiently is retried 5 s later.
    const terminal = await watch.terminal(20_000);
    watch.stop();
    return { taskId, terminal, events: watch.events };
  }

  const seen = new Map<string, typeof fake.requests>();
  const requestsOf = (taskId: string) => seen.get(taskId) ?? [];
  /** The Authorization header of each provider call of the run. */
  const keysSent = (taskId: string) => requestsOf(taskId).map((r) => r.authorization);

  /** Runs and notes which of the fake provider's requests were the run's (they come in order, one run at a time). */
  async function runNoting(caller: VerifiedIdentity, agentId?: string) {
    const before = fake.requests.length;
    const result = await run(caller, agentId);
    seen.set(result.taskId, fake.requests.slice(before));
    return result;
  }

  it("calls the provider with the broker's key and publishes one llm.provider_credential_fetched per fetch", async () => {
    const caller = newCaller();
    const before = broker.requests.length;
    const { taskId, terminal, events } = await runNoting(caller);
    expect(terminal.type).toBe('task.completed');
    // Two provider calls (a tool call, then the answer), one broker request: the second key came from the cache.
    expect(keysSent(taskId)).toEqual(['Bearer cred-1', 'Bearer cred-1']);
    expect(broker.requests.slice(before).map((r) => r.body)).toEqual([
      {
        format_version: 1,
        purpose: 'inference',
        provider: 'openai',
        subject: { kind: 'user', tenant: caller.tenant, user: caller.user },
        actor: { service: 'run-executor', agent_id: 'brokered', run: taskId },
      },
    ]);
    const fetched = ofType(events, FETCHED);
    expect(fetched).toHaveLength(1);
    expect(Object.keys(fetched[0]?.payload ?? {}).sort()).toEqual([
      'Broker',
      'KeyFingerprint',
      'OccurredAt',
      'Outcome',
      'Phase',
      'Provider',
      'RuntimePrincipal',
    ]);
    expect(fetched[0]?.payload).toMatchObject({
      RuntimePrincipal: 'run-executor/executor-7',
      Broker: new URL(broker.url).host,
      Provider: 'openai',
      KeyFingerprint: fingerprint('cred-1'),
      Phase: 'initial',
      Outcome: 'ok',
    });
    expect(JSON.stringify(events)).not.toContain('"cred-1"');
  });

  it("takes another run's key of the same user from the cache, without a fetch or its event", async () => {
    const caller = newCaller();
    await runNoting(caller);
    const before = broker.requests.length;
    const { taskId, events } = await runNoting({ ...caller, session: `${caller.session}-2` });
    expect(broker.requests.length).toBe(before);
    expect(ofType(events, FETCHED)).toEqual([]);
    expect(keysSent(taskId)).toHaveLength(2);
  });

  it('fetches a key again once it is about to expire, as a refresh', async () => {
    broker.expiresInSeconds = 10;
    const { taskId, events } = await runNoting(newCaller());
    const fetched = ofType(events, FETCHED).map((e) => e.payload);
    expect(fetched.map((p) => [p.Phase, p.Outcome])).toEqual([
      ['initial', 'ok'],
      ['refresh', 'ok'],
    ]);
    const [first, second] = keysSent(taskId);
    expect(first).not.toBe(second);
    expect(fetched[1]?.KeyFingerprint).toBe(fingerprint(String(second).replace('Bearer ', '')));
  });

  it('fails the run llm_error when the broker refuses and no failover is left, publishing the failure', async () => {
    broker.fail({ status: 403 });
    const { taskId, terminal, events } = await runNoting(newCaller());
    expect(terminal.payload).toEqual({ TaskID: taskId, ErrorCode: 'llm_error' });
    expect(ofType(events, FETCHED).map((e) => e.payload)).toEqual([
      expect.objectContaining({ Outcome: 'http_403', Phase: 'initial', KeyFingerprint: '' }),
    ]);
    expect(requestsOf(taskId)).toEqual([]);
  });

  it('fails over like a provider error when the broker refuses', async () => {
    broker.fail({ status: 403 });
    const { terminal, events } = await runNoting(newCaller(), 'brokered-failover');
    expect(terminal.type).toBe('task.completed');
    expect(ofType(events, FETCHED).map((e) => e.payload.Outcome)).toEqual(['http_403']);
  });

  it('retries the run later when the broker failed transiently', async () => {
    broker.fail({ status: 503 });
    const { terminal, events } = await runNoting(newCaller());
    expect(terminal.type).toBe('task.completed');
    expect(ofType(events, FETCHED).map((e) => e.payload.Outcome)).toEqual(['http_503', 'ok']);
  });
});
