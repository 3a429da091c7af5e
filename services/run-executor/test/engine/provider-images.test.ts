import { describe, expect, it } from 'vitest';
import { acceptsImages, hasFileApi, isSupportedImage } from '../../src/providers/capabilities.ts';
import { toWireMessages } from '../../src/providers/openai.ts';
import type { ChatMessage } from '../../src/providers/provider.ts';
import { describePart, inspection, promptDigest } from '../../src/providers/scripted.ts';

/** What providers know of images: which models take them, the wire parts, and the scripted provider's report. */

const DATA_URL = `data:image/png;base64,${Buffer.from('PNGDATA').toString('base64')}`;
const query: ChatMessage = {
  role: 'user',
  content: 'look',
  parts: [
    { type: 'image', artifact_id: 'a1', mime: 'image/png', data_url: DATA_URL },
    { type: 'file', artifact_id: 'a2', mime: 'image/jpeg', file_id: 'file-7' },
    { type: 'text', text: '[not attached]' },
    { type: 'artifact', artifact_id: 'a3', mime: 'image/gif' },
  ],
};

describe('provider images', () => {
  it('knows image models by name, org prefix and case aside; unknown models take none', () => {
    const openai = { kind: 'openai' as const };
    for (const model of ['gpt-4o-mini', 'gpt-4.1-nano', 'gpt-5', 'o3', 'Qwen/Qwen2.5-VL-7B-Instruct', 'llava:13b']) {
      expect([model, acceptsImages(openai, model)]).toEqual([model, true]);
    }
    for (const model of ['gpt-3.5-turbo', 'o3-mini', 'o1-mini', 'llama3.1:8b', 'test-model']) {
      expect([model, acceptsImages(openai, model)]).toEqual([model, false]);
    }
    expect(acceptsImages({ kind: 'scripted' }, 'scripted')).toBe(true);
    expect([hasFileApi(openai), hasFileApi({ kind: 'scripted' })]).toEqual([true, false]);
    expect(['image/png', 'image/JPEG; q=1', 'image/svg+xml'].map(isSupportedImage)).toEqual([true, true, false]);
  });

  it('sends a message with parts as chat-completions content parts after its text', () => {
    expect(toWireMessages('', [query, { role: 'user', content: 'plain' }])).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: DATA_URL } },
          { type: 'file', file: { file_id: 'file-7' } },
          { type: 'text', text: '[not attached]' },
          { type: 'text', text: '[input artifact a3 (image/gif)]' },
        ],
      },
      { role: 'user', content: 'plain' },
    ]);
  });

  it("reports the parts in the scripted provider's digest and inspection, the image by size and digest", () => {
    const image = describePart(query.parts?.[0] ?? { type: 'text', text: '' });
    expect(image).toMatch(/^image a1 image\/png 7 bytes sha256:[0-9a-f]{12}$/);
    expect(promptDigest({ goal: 'g', query: 'look', messages: [query] }).split('\n')).toEqual([
      'goal: g',
      'user: look',
      `part: ${image}`,
      'part: file file-7 a2 image/jpeg',
      'part: text [not attached]',
      'part: artifact a3 image/gif',
    ]);
    const inspected = JSON.parse(inspection({ system: '', params: {}, tools: [], messages: [query] })) as {
      parts: string[];
    };
    expect(inspected.parts).toHaveLength(4);
    expect(inspected.parts[0]).toBe(image);
  });
});
