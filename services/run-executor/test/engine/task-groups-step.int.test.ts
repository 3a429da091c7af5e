import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedEvents } from '@ars/service-kit/testing';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness } from './harness.ts';

/**
 * A task group is keyed by its owner run and planner step: a step replayed
 * by a redelivered run finds its group again, even when the model names the
 * call anew (as a real model does: the `openai` provider passes its tool
 * call id through), and two steps spawn two groups.
 */

const CHILDREN = [
  { query: '#script tool:wait{"ms":1500};finish:a' },
  { query: '#script tool:wait{"ms":1500};finish:b' },
];

/**
 * A chat-completions server whose model calls `spawn_group` under a fresh
 * call id each time while the conversation has no tool result, then answers.
 */
async function startRandomIdModel(): Promise<{ url: string; callIds: string[]; server: Server }> {
  const callIds: string[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as { messages: { role: string }[] };
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (body.messages.some((m) => m.role === 'tool')) {
        res.write(chunk({ role: 'assistant', content: 'all done' }));
        res.write(chunk({}, 'stop'));
      } else {
        const id = `call_${randomUUID()}`;
        callIds.push(id);
        const args = JSON.stringify({ tasks: CHILDREN });
        const call = { index: 0, id, type: 'function', function: { name: 'spawn_group', arguments: args } };
        res.write(chunk({ role: 'assistant', tool_calls: [call] }));
        res.write(chunk({}, 'tool_calls'));
      }
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, callIds, server };
}

const ofRun = (events: readonly EventFrame[], run: string, type: string) =>
  events.filter((e) => e.run === run && e.type === type);

describe('task groups keyed by planner step', { timeout: 60_000 }, () => {
  let h: EngineHarness;
  let model: Awaited<ReturnType<typeof startRandomIdModel>>;

  beforeAll(async () => {
    model = await startRandomIdModel();
    // A short drain grace: the restart hands the waiting owner back instead of letting its group resolve first.
    h = await startEngineHarness({ EXECUTOR_DRAIN_GRACE_MS: '200' }, { persistentStore: true });
    h.agentConfigs.set('random-ids', {
      llm_provider: { provider_name: 'local', provider: 'openai', base_url: model.url, model: 'm', api_key: 'k' },
    });
  });

  afterAll(async () => {
    await h?.stop();
    await new Promise((resolve) => model?.server.close(resolve));
  });

  const sessionEvents = (caller: VerifiedIdentity) =>
    storedEvents(h.bus, { tenant: caller.tenant, user: caller.user, session: caller.session });

  it('finds its group again when a redelivered run replays the step under a new call id', async () => {
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query: 'fan out', agent_id: 'random-ids' });
    await watch.until((e) => e.type === 'task.group_sealed', 20_000);
    await h.restart();
    expect((await watch.terminal(30_000)).type).toBe('task.completed');
    watch.stop();
    const events = await sessionEvents(caller);
    // The step ran on both executors, and the model named its call differently each time.
    expect(ofRun(events, taskId, 'tool.invoked')).toHaveLength(2);
    expect(new Set(model.callIds).size).toBe(model.callIds.length);
    expect(model.callIds.length).toBeGreaterThanOrEqual(2);
    const count = (type: string) => ofRun(events, taskId, type).length;
    expect([count('task.group_created'), count('task.group_sealed'), count('task.group_resolved')]).toEqual([1, 1, 1]);
    const children = events.filter((e) => e.type === 'task.spawned' && e.payload.ParentTaskID === taskId);
    expect(children).toHaveLength(2);
    const resolved = ofRun(events, taskId, 'task.group_resolved')[0]?.payload.Completion as {
      Members: { Answer: string }[];
    };
    expect(resolved.Members.map((m) => m.Answer)).toEqual(['a', 'b']);
  });

  it('spawns a group per step when a run fans out in two steps', async () => {
    const caller = newCaller();
    const spawn = (answer: string) =>
      `tool:spawn_group${JSON.stringify({ tasks: [{ query: `#script finish:${answer}` }] })}`;
    const { taskId, watch } = await h.start(caller, {
      query: `#script ${spawn('first')};${spawn('second')};finish:ok`,
    });
    expect((await watch.terminal(20_000)).type).toBe('task.completed');
    watch.stop();
    const events = await sessionEvents(caller);
    const groups = ofRun(events, taskId, 'task.group_created').map((e) => e.payload.GroupID);
    expect(new Set(groups).size).toBe(2);
    const answers = ofRun(events, taskId, 'task.group_resolved').map(
      (e) => (e.payload.Completion as { GroupID: string; Members: { Answer: string }[] }).Members[0]?.Answer,
    );
    expect(answers).toEqual(['first', 'second']);
    expect(events.filter((e) => e.type === 'task.spawned' && e.payload.ParentTaskID === taskId)).toHaveLength(2);
  });
});
