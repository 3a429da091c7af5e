import { describe, expect, it } from 'vitest';
import { inputMessages, outputMessages } from '../../src/engine/call-spans.ts';
import type { ChatMessage } from '../../src/providers/provider.ts';

/** The opted-in prompt and answer of an LLM span, in the GenAI conventions' JSON shapes. */
describe('LLM span content', () => {
  it('maps the conversation to gen_ai.input.messages, images as artifact references without their bytes', () => {
    const messages: ChatMessage[] = [
      {
        role: 'user',
        content: 'describe it',
        parts: [
          { type: 'image', artifact_id: 'a1', mime: 'image/png', data_url: 'data:image/png;base64,AAAA' },
          { type: 'file', artifact_id: 'a2', mime: 'image/jpeg', file_id: 'file-9' },
        ],
      },
      { role: 'assistant', content: '', tool_call: { id: 'c1', name: 'echo', args: { x: 1 } } },
      { role: 'tool', content: '{"x":1}', tool_call_id: 'c1' },
    ];
    const mapped = JSON.parse(inputMessages(messages)) as unknown;
    expect(mapped).toEqual([
      {
        role: 'user',
        parts: [
          { type: 'text', content: 'describe it' },
          { type: 'uri', modality: 'image', mime_type: 'image/png', uri: 'artifact://a1' },
          { type: 'uri', modality: 'image', mime_type: 'image/jpeg', uri: 'artifact://a2', file_id: 'file-9' },
        ],
      },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'echo', arguments: { x: 1 } }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: '{"x":1}' }] },
    ]);
    expect(inputMessages(messages)).not.toContain('base64');
  });

  it('maps a decision to gen_ai.output.messages with its finish reason', () => {
    expect(JSON.parse(outputMessages({ reasoning: '', decision: { kind: 'finish', answer: 'done' } }))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'done' }], finish_reason: 'stop' },
    ]);
    const call = outputMessages({
      reasoning: 'thinking',
      decision: { kind: 'tool_call', callId: 'c2', tool: 'wait', args: undefined, rawArgs: '{"ms":' },
    });
    expect(JSON.parse(call)).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', content: 'thinking' },
          { type: 'tool_call', id: 'c2', name: 'wait', arguments: '{"ms":' },
        ],
        finish_reason: 'tool_call',
      },
    ]);
  });
});
