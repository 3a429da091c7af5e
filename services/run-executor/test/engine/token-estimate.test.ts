import { describe, expect, it } from 'vitest';
import { promptTokens } from '../../src/engine/context-window.ts';
import { encodingOf, messageTokens, textTokens } from '../../src/engine/token-estimate.ts';
import type { ChatMessage } from '../../src/providers/provider.ts';

describe('token estimate', () => {
  it('maps OpenAI model families to their encodings and others to none', () => {
    expect(
      ['gpt-4o-mini', 'gpt-4.1', 'o3-mini', 'gpt-5', 'gpt-4-0613', 'gpt-3.5-turbo', 'llama-3', 'scripted'].map(
        encodingOf,
      ),
    ).toEqual([
      'o200k_base',
      'o200k_base',
      'o200k_base',
      'o200k_base',
      'cl100k_base',
      'cl100k_base',
      undefined,
      undefined,
    ]);
  });

  it('counts with the tokenizer of the encoding', () => {
    expect(textTokens('hello world', 'o200k_base')).toBe(2);
    expect(textTokens('hello world', 'cl100k_base')).toBe(2);
    expect(textTokens('', 'o200k_base')).toBe(0);
  });

  it('counts CJK text closer than 4 characters a token does', () => {
    const cjk = '東京は日本の首都であり、世界で最も人口の多い都市圏の一つです。';
    const tokens = promptTokens('', [{ role: 'user', content: cjk }], [], 'gpt-4o');
    expect(tokens).toBeGreaterThan(promptTokens('', [{ role: 'user', content: cjk }], []));
  });

  it('keeps the 4-characters-a-token estimate for models without a tokenizer', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'a'.repeat(400) }];
    expect(promptTokens('sys', messages, [], 'llama-3')).toBe(promptTokens('sys', messages, []));
  });

  it('counts a message again when its content changed, and its tool call', () => {
    const message: ChatMessage = { role: 'assistant', content: 'hello world' };
    expect(messageTokens(message, 'o200k_base')).toBe(2 + 3);
    message.content = 'hello';
    expect(messageTokens(message, 'o200k_base')).toBe(1 + 3);
    const call: ChatMessage = {
      role: 'assistant',
      content: '',
      tool_call: { id: 'c', name: 'echo', args: { text: 'hi' } },
    };
    expect(messageTokens(call, 'o200k_base')).toBe(textTokens('echo{"text":"hi"}', 'o200k_base') + 3);
  });
});
