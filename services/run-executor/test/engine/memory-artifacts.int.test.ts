import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { storedEvents } from '@ars/service-kit/testing';
import { newCaller } from './harness.ts';
import { startSystemHarness } from './system-harness.ts';
import type { SystemHarness } from './system-harness.ts';

/**
 * Memory and artifacts in runs, with the real memory, artifact and
 * agent-registry services: the planner's prompt carries the caller's memory,
 * the memory and artifact tools read and write through those services, and
 * input artifacts get a resolved disposition each, published before the
 * first planner step.
 */

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);
const traces = (events: readonly EventFrame[]) =>
  ofType(events, 'planner.decision').map((e) => String(e.payload.ReasoningTrace));
const inspectedSystem = (events: readonly EventFrame[]) =>
  (JSON.parse(traces(events).at(-1) ?? '{}') as { system: string }).system;
const script = (...steps: string[]) => `#script ${steps.join(';')}`;

describe('memory and artifacts in runs', () => {
  let h: SystemHarness;

  beforeAll(async () => {
    h = await startSystemHarness(['memory', 'artifact', 'agent-registry']);
  });

  afterAll(async () => {
    await h?.stop();
  });

  const admin = (caller: VerifiedIdentity) => ({ ...caller, scopes: ['admin'] });

  async function upload(caller: VerifiedIdentity, content: string | Buffer, mime: string): Promise<string> {
    const answer = (await h.call(
      'artifact',
      'artifacts.put',
      { content_base64: Buffer.from(content).toString('base64'), mime_type: mime },
      caller,
    )) as { artifact: { artifact_id: string } };
    return answer.artifact.artifact_id;
  }

  describe('memory', () => {
    it("puts the caller's memory into the planner's prompt; the memory service reports each admitted block", async () => {
      const caller = newCaller();
      await h.call('memory', 'memory.put', { tier: 'tenant', key: 'policy', value: 'TENANT MEMORY' }, admin(caller));
      await h.call('memory', 'memory.put', { tier: 'user', key: 'likes', value: 'USER MEMORY' }, admin(caller));
      const { watch } = await h.run(caller, { query: '#script inspect' });
      const system = inspectedSystem(watch.events);
      expect(system).toContain('policy: TENANT MEMORY');
      expect(system).toContain('likes: USER MEMORY');
      expect(system.indexOf('TENANT MEMORY')).toBeLessThan(system.indexOf('Goal:'));
      const admitted = ofType(watch.events, 'memory.caller_block_admitted');
      expect(admitted.map((e) => e.payload)).toEqual([
        { bytes: expect.any(Number), tier: 'tenant', key: 'policy' },
        { bytes: expect.any(Number), tier: 'user', key: 'likes' },
      ]);
      const types = watch.types();
      expect(types.lastIndexOf('memory.caller_block_admitted')).toBeLessThan(types.indexOf('planner.decision'));
    });

    it('writes and reads caller memory with the built-in tools', async () => {
      const caller = newCaller();
      const { watch } = await h.run(caller, {
        query: script(
          'tool:memory_write{"key":"colour","value":{"name":"teal"}}',
          'tool:memory_read{"key":"colour"}',
          'finish:ok',
        ),
      });
      expect(ofType(watch.events, 'tool.completed').map((e) => e.payload.ToolName)).toEqual([
        'memory_write',
        'memory_read',
      ]);
      expect(traces(watch.events)[2]).toContain(
        'tool: {"key":"colour","tier":"user","value":{"name":"teal"},"version":1}',
      );
      const puts = await storedEvents(h.bus, {
        tenant: caller.tenant,
        user: caller.user,
        session: caller.session,
        type: 'memory.item_put',
      });
      expect(puts.map((e) => e.payload)).toEqual([{ Operation: 'caller_memory.write', Key: 'colour' }]);
      // A later run of the same user, in another session, sees it in its prompt.
      const later = await h.run({ ...caller, session: `${caller.session}-2` }, { query: '#script inspect' });
      expect(inspectedSystem(later.watch.events)).toContain('colour: {"name":"teal"}');
    });

    it("refreshes the prompt's memory after the run's own write", async () => {
      const caller = newCaller();
      const { watch } = await h.run(caller, {
        query: script('tool:memory_write{"key":"fresh","value":"yes"}', 'inspect'),
      });
      expect(inspectedSystem(watch.events)).toContain('fresh: yes');
    });
  });

  describe('input artifacts', () => {
    it('resolves each disposition (start hint, agent multimodal, runtime default) before the first planner step', async () => {
      const caller = newCaller();
      await h.call(
        'agent-registry',
        'agent_config.set_revision',
        { agent_id: 'mm', config: { multimodal: { default_disposition: 'inline' } } },
        admin(caller),
      );
      const inline = await upload(caller, 'HELLO INLINE', 'text/plain');
      const image = await upload(caller, Buffer.from([0x89, 0x50, 0x4e]), 'image/png');
      const referenced = await upload(caller, 'BY REFERENCE', 'text/plain');
      const tooled = await upload(caller, '{"a":1}', 'application/json');
      const { taskId, watch } = await h.run(caller, {
        query: '#script inspect',
        agent_id: 'mm',
        input_artifact_ids: [inline, image, referenced, tooled],
        input_artifact_dispositions: { [image]: 'provider_native', [referenced]: 'ref', [tooled]: 'tool:echo' },
      });
      const resolved = ofType(watch.events, 'task.input_disposition.resolved');
      const identity = { tenant: caller.tenant, user: caller.user, session: caller.session, run: taskId };
      const common = { identity, task_id: taskId, occurred_at: expect.any(String) };
      expect(resolved.map((e) => e.payload)).toEqual([
        {
          ...common,
          artifact_id: inline,
          mime: 'text/plain',
          disposition: 'inline',
          layer: 'agent_multimodal',
          degraded: false,
        },
        {
          ...common,
          artifact_id: image,
          mime: 'image/png',
          disposition: 'ref',
          layer: 'start_hint',
          degraded: true,
          degraded_from: 'provider_native',
          degradation_reason: 'provider_native_unsupported',
        },
        {
          ...common,
          artifact_id: referenced,
          mime: 'text/plain',
          disposition: 'ref',
          layer: 'start_hint',
          degraded: false,
        },
        {
          ...common,
          artifact_id: tooled,
          mime: 'application/json',
          disposition: 'tool:echo',
          layer: 'start_hint',
          degraded: false,
          tool: 'echo',
        },
      ]);
      const types = watch.types();
      expect(types.lastIndexOf('task.input_disposition.resolved')).toBeLessThan(types.indexOf('llm.completion.chunk'));
      const system = inspectedSystem(watch.events);
      expect(system).toContain(`- ${inline} (text/plain, 12 bytes), inline:\nHELLO INLINE`);
      expect(system).toContain(`- ${referenced} (text/plain, 12 bytes): by reference`);
      expect(system).not.toContain('BY REFERENCE');
      expect(system).toContain(`- ${tooled} (application/json, 7 bytes): use the echo tool on it.`);
    });

    it('uses the runtime default ref when neither the start nor the agent names a disposition', async () => {
      const caller = newCaller();
      const id = await upload(caller, 'plain', 'text/plain');
      const { watch } = await h.run(caller, { query: '#script finish:ok', input_artifact_ids: [id] });
      expect(ofType(watch.events, 'task.input_disposition.resolved').map((e) => e.payload)).toEqual([
        expect.objectContaining({ artifact_id: id, disposition: 'ref', layer: 'runtime_default', degraded: false }),
      ]);
    });

    it('reads artifact bytes with artifact_read, bounded by max_bytes', async () => {
      const caller = newCaller();
      const id = await upload(caller, 'HELLO WORLD', 'text/plain');
      const { watch } = await h.run(caller, {
        query: script(`tool:artifact_read{"artifact_id":"${id}","max_bytes":5}`, 'finish:ok'),
      });
      expect(ofType(watch.events, 'tool.completed').map((e) => e.payload.ToolName)).toEqual(['artifact_read']);
      const output = traces(watch.events)[1] ?? '';
      expect(output).toContain(`"artifact_id":"${id}"`);
      expect(output).toContain('"encoding":"utf8","truncated":true,"content":"HELLO"');
    });

    it("cannot read another user's artifact", async () => {
      const owner = newCaller();
      const id = await upload(owner, 'secret', 'text/plain');
      const stranger = { ...owner, user: 'mallory' };
      const { watch } = await h.run(stranger, {
        query: script(`tool:artifact_read{"artifact_id":"${id}"}`, 'finish:ok'),
      });
      const failed = ofType(watch.events, 'tool.failed');
      expect(failed.map((e) => [e.payload.ErrorClass, String(e.payload.ErrorMessage).split(':')[0]])).toEqual([
        ['permanent', 'not_found'],
      ]);
      expect(traces(watch.events)[1]).not.toContain('secret');
    });

    it('stores a new artifact with artifact_write through the upload protocol', async () => {
      const caller = newCaller();
      const { watch } = await h.run(caller, {
        query: script('tool:artifact_write{"content":"written by a run","name":"out.txt"}', 'finish:ok'),
      });
      expect(ofType(watch.events, 'tool.completed').map((e) => e.payload.ToolName)).toEqual(['artifact_write']);
      const output = /tool: (\{.*\})/.exec(traces(watch.events)[1] ?? '')?.[1];
      const written = JSON.parse(output ?? '{}') as { artifact_id: string; size_bytes: number; name: string };
      expect(written).toMatchObject({ size_bytes: 16, name: 'out.txt', mime_type: 'text/plain' });
      const got = (await h.call('artifact', 'artifacts.get', { artifact_id: written.artifact_id }, caller)) as {
        artifact: { source: string; namespace: string; session: string };
        content_base64: string;
      };
      expect(Buffer.from(got.content_base64, 'base64').toString()).toBe('written by a run');
      expect(got.artifact).toMatchObject({ source: 'tool:artifact_write', namespace: 'run', session: caller.session });
    });
  });
});
