import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArsClient } from '@ars/client';
import type { FlowRunDescription, FlowRunResponse } from '@ars/contracts';
import { mintToken, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestIdentity, TestSystem } from '@ars/testkit';
import { EventLog } from './support/event-log.ts';
import { refusal, storedEvents, streamCursor } from './support/runs.ts';

/**
 * Flows over the public API: a flow file of the caller's tenant (the
 * run-executor's `FLOWS_DIR`), run by an admin through the gateway (a
 * 3-step flow with a fan-out of three), read back with the flows.* reads,
 * and the refusals of the spec's Auth column: flows.run needs admin, the
 * fan-in of flows.list and flows.runs.list needs admin.
 */

const FLOW = {
  name: 'Fan of three',
  input_schema: { type: 'object', required: ['topic'], properties: { topic: { type: 'string' } } },
  steps: [
    { id: 'plan', type: 'run', query: '#script finish:plan for {{input.topic}}' },
    {
      id: 'fan',
      type: 'parallel',
      branches: ['x', 'y', 'z'].map((part) => ({ query: `#script tool:wait{"ms":50};finish:${part}` })),
    },
    {
      id: 'merge',
      type: 'run',
      query:
        '#script finish:{{steps.plan.answer}}: {{steps.fan.answers.0}}{{steps.fan.answers.1}}{{steps.fan.answers.2}}',
    },
  ],
};

describe('flows end to end', () => {
  let sys: TestSystem;
  let dir: string;
  const identity: TestIdentity = uniqueIdentity('flows');
  let admin: ArsClient;
  let plain: ArsClient;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-e2e-flows-'));
    await mkdir(join(dir, identity.tenant));
    await writeFile(join(dir, identity.tenant, 'fan3.json'), JSON.stringify(FLOW));
    sys = await startTestSystem({ mode: 'one-process', env: { FLOWS_DIR: dir } });
    admin = sys.client({ token: await mintToken(sys.baseUrl, { ...identity, scopes: ['admin'] }) });
    plain = sys.client({ token: await mintToken(sys.baseUrl, { ...identity, scopes: [] }) });
  });

  afterAll(async () => {
    await sys?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs a 3-step flow with a fan-out of 3 to completion, its steps and children readable', async () => {
    const cursor = await streamCursor(admin);
    const started = await admin.call<FlowRunResponse>('flows.run', {
      identity: {},
      flow_id: 'fan3',
      input: { topic: 'e2e' },
    });
    const log = new EventLog(admin, { run: started.task_id ?? '', lastEventId: cursor });
    try {
      expect((await log.terminal()).type).toBe('task.completed');
    } finally {
      await log.close();
    }
    const invoked = log.frames.find((f) => f.type === 'flows.run_invoked');
    expect(invoked?.payload).toEqual({ FlowID: 'fan3', RunID: started.run_id });
    const described = await plain.call<FlowRunDescription>('flows.runs.describe', {
      identity: {},
      run_id: started.run_id,
    });
    expect(described.run).toMatchObject({ status: 'complete', answer: 'plan for e2e: xyz' });
    expect(described.steps?.map((s) => [s.step_id, s.status, s.child_task_ids.length])).toEqual([
      ['plan', 'completed', 1],
      ['fan', 'completed', 3],
      ['merge', 'completed', 1],
    ]);
    const child = described.steps?.[1]?.child_task_ids[0] ?? '';
    const task = await admin.call<{ task: { parent_task_id?: string; status: string } }>('tasks.get', {
      identity: {},
      task_id: child,
    });
    expect(task.task).toMatchObject({ parent_task_id: started.task_id, status: 'complete' });
  });

  it('reads flows, runs and metrics as a plain member of the tenant', async () => {
    const flows = await plain.call<{ items: { flow_id: string; status: string }[] }>('flows.list', { identity: {} });
    expect(flows.items.map((f) => [f.flow_id, f.status])).toEqual([['fan3', 'valid']]);
    const described = await plain.call<{ flow: { name: string }; recent_runs: unknown[] }>('flows.describe', {
      identity: {},
      flow_id: 'fan3',
    });
    expect(described.flow.name).toBe('Fan of three');
    const runs = await plain.call<{ items: { flow_id: string }[] }>('flows.runs.list', {
      identity: {},
      filter: { flow_id: 'fan3' },
    });
    expect(runs.items.length).toBeGreaterThanOrEqual(1);
    const metrics = await plain.call<{ items: { flow_id: string; runs: number }[] }>('flows.metrics', {
      identity: {},
    });
    expect(metrics.items.map((m) => m.flow_id)).toEqual(['fan3']);
  });

  it('refuses flows.run without admin: 403 identity_scope_required', async () => {
    const refused = await refusal(plain.call('flows.run', { identity: {}, flow_id: 'fan3', input: { topic: 'x' } }));
    expect([refused.status, refused.code]).toEqual([403, 'identity_scope_required']);
  });

  it('refuses bad input in the envelope: 400 for input its schema refuses, 404 for an unknown flow', async () => {
    const bad = await refusal(admin.call('flows.run', { identity: {}, flow_id: 'fan3', input: { topic: 1 } }));
    expect([bad.status, bad.code]).toEqual([400, 'invalid_request']);
    const missing = await refusal(admin.call('flows.run', { identity: {}, flow_id: 'nope' }));
    expect([missing.status, missing.code]).toEqual([404, 'not_found']);
    const unknown = await refusal(admin.call('flows.run', { identity: {}, flow_id: 'fan3', extra: 1 }));
    expect([unknown.status, unknown.code]).toEqual([400, 'invalid_request']);
  });

  it('refuses the fan-in of flows.list and flows.runs.list without admin (XA), grants and audits it with admin', async () => {
    const other = uniqueIdentity('flows-other').tenant;
    for (const method of ['flows.list', 'flows.runs.list']) {
      const refused = await refusal(plain.call(method, { identity: {}, filter: { tenant_ids: [other] } }));
      expect([method, refused.status, refused.code]).toEqual([method, 403, 'scope_mismatch']);
    }
    const cursor = await streamCursor(admin);
    const granted = await admin.call<{ items: { tenant: string }[] }>('flows.list', {
      identity: {},
      filter: { tenant_ids: [identity.tenant, other] },
    });
    expect(granted.items.map((f) => f.tenant)).toEqual([identity.tenant]);
    const events = await storedEvents(admin, {}, undefined);
    const viewed = events.filter((e) => e.sequence > cursor && e.type === 'flows.page_viewed');
    expect(viewed.map((e) => e.payload)).toContainEqual({ Method: 'flows.list', FlowID: '', AdminScoped: true });
  });
});
