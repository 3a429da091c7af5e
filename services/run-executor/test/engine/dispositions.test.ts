import { describe, expect, it } from 'vitest';
import { dispositionPayload, resolveDisposition } from '../../src/engine/dispositions.ts';

const context = { exposedTools: new Set(['artifact_read', 'echo']), inlineMaxBytes: 100 };
const text = { artifact_id: 'a1', mime_type: 'text/plain', size_bytes: 10 };

describe('input artifact dispositions', () => {
  it('takes the start hint first', () => {
    expect(resolveDisposition({ ...text, disposition: 'inline' }, { ...context, agentDefault: 'ref' })).toEqual({
      artifact_id: 'a1',
      mime: 'text/plain',
      size_bytes: 10,
      disposition: 'inline',
      layer: 'start_hint',
      degraded: false,
    });
  });

  it("then the agent's multimodal default, then the runtime default ref", () => {
    expect(resolveDisposition(text, { ...context, agentDefault: 'inline' })).toMatchObject({
      disposition: 'inline',
      layer: 'agent_multimodal',
    });
    expect(resolveDisposition(text, context)).toMatchObject({
      disposition: 'ref',
      layer: 'runtime_default',
      degraded: false,
    });
  });

  it('degrades inline to ref for binary or oversized content', () => {
    expect(resolveDisposition({ ...text, mime_type: 'image/png', disposition: 'inline' }, context)).toMatchObject({
      disposition: 'ref',
      degraded: true,
      degraded_from: 'inline',
      degradation_reason: 'not_text',
    });
    expect(resolveDisposition({ ...text, size_bytes: 101, disposition: 'inline' }, context)).toMatchObject({
      disposition: 'ref',
      degradation_reason: 'too_large',
    });
  });

  it('degrades provider_native (no provider uploads files) and a tool the run does not expose', () => {
    expect(resolveDisposition({ ...text, disposition: 'provider_native' }, context)).toMatchObject({
      disposition: 'ref',
      degraded_from: 'provider_native',
      degradation_reason: 'provider_native_unsupported',
    });
    expect(resolveDisposition({ ...text, disposition: 'tool:ocr' }, context)).toMatchObject({
      disposition: 'ref',
      degraded_from: 'tool:ocr',
      degradation_reason: 'tool_not_exposed',
    });
    expect(resolveDisposition({ ...text, disposition: 'tool:echo' }, context)).toMatchObject({
      disposition: 'tool:echo',
      tool: 'echo',
      degraded: false,
    });
  });

  it('builds the event payload with lowercase keys, leaving the optional ones out when unset', () => {
    const identity = { tenant: 't', user: 'u', session: 's', run: 'r' };
    const payload = dispositionPayload(identity, resolveDisposition(text, context), 'now');
    expect(payload).toEqual({
      identity,
      task_id: 'r',
      artifact_id: 'a1',
      mime: 'text/plain',
      disposition: 'ref',
      layer: 'runtime_default',
      degraded: false,
      occurred_at: 'now',
    });
  });
});
