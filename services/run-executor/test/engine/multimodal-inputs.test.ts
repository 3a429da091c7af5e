import { describe, expect, it } from 'vitest';
import { createRunMedia, fileKey, MEDIA_EVENT_IDS } from '../../src/engine/multimodal-inputs.ts';
import type { MediaTarget, RecalledMedia, RunMediaDeps } from '../../src/engine/multimodal-inputs.ts';
import type { InputImage } from '../../src/engine/dispositions.ts';
import type { ChatMessage, CompletionResult, LlmProvider, ProviderFileUpload } from '../../src/providers/provider.ts';

/**
 * A run's input images made into what each call's provider and model take,
 * with fakes for the artifact read, the event stream and the provider's
 * file API.
 */

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 9, 9]);
const quad = { tenant: 't', user: 'u', session: 's', run: 'r1' };
const nothing: RecalledMedia = { materialized: new Set(), files: new Map() };

interface Emitted {
  type: string;
  payload: Record<string, unknown>;
  id: string;
}

function fakes(recalled: RecalledMedia | Error = nothing, readBytes: Uint8Array = PNG) {
  const emitted: Emitted[] = [];
  const warnings: string[] = [];
  let recalls = 0;
  let reads = 0;
  const deps: RunMediaDeps = {
    taskId: 'r1',
    quad,
    imageMaxBytes: 100,
    read: async (_id, maxBytes) => {
      reads++;
      return { bytes: readBytes.subarray(0, maxBytes), truncated: readBytes.length > maxBytes };
    },
    emit: (type, payload, id) => emitted.push({ type, payload, id }),
    recall: async () => {
      recalls++;
      if (recalled instanceof Error) throw recalled;
      return recalled;
    },
    warn: (_fields, message) => warnings.push(message),
  };
  return { deps, emitted, warnings, recalls: () => recalls, reads: () => reads };
}

function openai(fileIds: string[] | Error, uploads: ProviderFileUpload[] = []): LlmProvider {
  return {
    kind: 'openai',
    complete: async () => ({}) as CompletionResult,
    uploadFile: async (file) => {
      uploads.push(file);
      if (fileIds instanceof Error) throw fileIds;
      return fileIds.shift() ?? 'file-none';
    },
  };
}

const target = (provider: LlmProvider, model = 'gpt-4o', name = 'main'): MediaTarget => ({
  provider,
  settings: { kind: 'openai', name },
  model,
});

const inline: InputImage = { artifact_id: 'a1', mime: 'image/png', disposition: 'inline', bytes: PNG };
const native: InputImage = { artifact_id: 'a2', mime: 'image/png', disposition: 'provider_native' };

function withQuery(media: { placeholders: ChatMessage['parts'] }): ChatMessage[] {
  return [
    { role: 'user', content: 'earlier' },
    { role: 'assistant', content: 'answer' },
    { role: 'user', content: 'look', ...(media.placeholders === undefined ? {} : { parts: media.placeholders }) },
  ];
}

const signal = new AbortController().signal;

describe('multimodal inputs', () => {
  it('puts one placeholder per image on the query and leaves other messages alone', async () => {
    const { deps } = fakes();
    const media = createRunMedia([inline], deps);
    expect(media.placeholders).toEqual([{ type: 'artifact', artifact_id: 'a1', mime: 'image/png' }]);
    const out = await media.materialize(withQuery(media), target(openai([])), signal);
    expect(out[0]).toEqual({ role: 'user', content: 'earlier' });
    expect(out[2]?.parts).toEqual([
      {
        type: 'image',
        artifact_id: 'a1',
        mime: 'image/png',
        data_url: `data:image/png;base64,${Buffer.from(PNG).toString('base64')}`,
      },
    ]);
  });

  it('publishes llm.image.materialized once per run under a fixed id, however many calls send it', async () => {
    const { deps, emitted } = fakes();
    const media = createRunMedia([inline], deps);
    for (let i = 0; i < 3; i++) await media.materialize(withQuery(media), target(openai([])), signal);
    expect(emitted).toEqual([
      {
        type: 'llm.image.materialized',
        id: MEDIA_EVENT_IDS.materialized('r1', 'a1'),
        payload: {
          Identity: quad,
          Model: 'gpt-4o',
          ArtifactRef: 'a1',
          MIME: 'image/png',
          SizeBytes: PNG.length,
          OccurredAt: expect.any(String),
        },
      },
    ]);
  });

  it('does not publish llm.image.materialized again when an earlier claim of the run did', async () => {
    const { deps, emitted } = fakes({ materialized: new Set(['a1']), files: new Map() });
    const media = createRunMedia([inline], deps);
    const out = await media.materialize(withQuery(media), target(openai([])), signal);
    expect(out[2]?.parts?.[0]?.type).toBe('image');
    expect(emitted).toEqual([]);
  });

  it('gives a model that takes no images a text reference, and publishes nothing', async () => {
    const { deps, emitted } = fakes();
    const media = createRunMedia([inline, native], deps);
    const out = await media.materialize(withQuery(media), target(openai(['file-1']), 'gpt-3.5-turbo'), signal);
    expect(out[2]?.parts?.map((p) => p.type)).toEqual(['text', 'text']);
    expect(JSON.stringify(out[2]?.parts)).toContain('the model gpt-3.5-turbo does not take images');
    expect(emitted).toEqual([]);
  });

  it('uploads a provider_native image once per provider installation and names it by file id', async () => {
    const { deps, emitted, reads } = fakes();
    const uploads: ProviderFileUpload[] = [];
    const provider = openai(['file-1', 'file-2'], uploads);
    const media = createRunMedia([native], deps);
    const first = await media.materialize(withQuery(media), target(provider), signal);
    const second = await media.materialize(withQuery(media), target(provider), signal);
    expect(first[2]?.parts).toEqual([{ type: 'file', artifact_id: 'a2', mime: 'image/png', file_id: 'file-1' }]);
    expect(second[2]?.parts).toEqual(first[2]?.parts);
    expect(uploads.map((u) => [u.filename, u.mime, Buffer.from(u.bytes).equals(Buffer.from(PNG))])).toEqual([
      ['a2.png', 'image/png', true],
    ]);
    expect(reads()).toBe(1);
    expect(emitted.map((e) => [e.type, e.id, e.payload.FileID, e.payload.Provider])).toEqual([
      ['llm.provider_file.uploaded', MEDIA_EVENT_IDS.uploaded('r1', 'main', 'a2'), 'file-1', 'main'],
    ]);
    // A failover to another installation: its own upload, its own event.
    const other = await media.materialize(withQuery(media), target(provider, 'gpt-4o', 'backup'), signal);
    expect(other[2]?.parts).toEqual([{ type: 'file', artifact_id: 'a2', mime: 'image/png', file_id: 'file-2' }]);
    expect(emitted.map((e) => e.payload.Provider)).toEqual(['main', 'backup']);
  });

  it('shares one upload between concurrent calls', async () => {
    const { deps } = fakes();
    const uploads: ProviderFileUpload[] = [];
    const provider = openai(['file-1', 'file-2'], uploads);
    const media = createRunMedia([native], deps);
    await Promise.all([1, 2].map(() => media.materialize(withQuery(media), target(provider), signal)));
    expect(uploads).toHaveLength(1);
  });

  it('uses the file id an earlier claim of the run uploaded, without reading or uploading', async () => {
    const { deps, emitted, reads } = fakes({
      materialized: new Set(),
      files: new Map([[fileKey('main', 'a2'), 'file-9']]),
    });
    const uploads: ProviderFileUpload[] = [];
    const media = createRunMedia([native], deps);
    const out = await media.materialize(withQuery(media), target(openai(['file-1'], uploads)), signal);
    expect(out[2]?.parts).toEqual([{ type: 'file', artifact_id: 'a2', mime: 'image/png', file_id: 'file-9' }]);
    expect([uploads.length, reads(), emitted.length]).toEqual([0, 0, 0]);
  });

  it('recalls once per claim, and uploads when the recall fails (logged)', async () => {
    const { deps, recalls, warnings } = fakes(new Error('stream down'));
    const uploads: ProviderFileUpload[] = [];
    const media = createRunMedia([inline, native], deps);
    await media.materialize(withQuery(media), target(openai(['file-1'], uploads)), signal);
    await media.materialize(withQuery(media), target(openai(['file-1'], uploads)), signal);
    expect(recalls()).toBe(1);
    expect(uploads).toHaveLength(1);
    expect(warnings).toEqual(['input image events not recalled; an image may be uploaded again']);
  });

  it('sends a text reference when the upload fails, and does not try again', async () => {
    const { deps, emitted, warnings } = fakes();
    const uploads: ProviderFileUpload[] = [];
    const media = createRunMedia([native], deps);
    const provider = openai(new Error('404 Not Found'), uploads);
    for (let i = 0; i < 2; i++) {
      const out = await media.materialize(withQuery(media), target(provider), signal);
      expect(out[2]?.parts).toEqual([
        {
          type: 'text',
          text: '[input image a2 (image/png) is not attached: its upload to the provider failed; read it with the artifact_read tool when needed]',
        },
      ]);
    }
    expect(uploads).toHaveLength(1);
    expect(emitted).toEqual([]);
    expect(warnings).toEqual(['input image upload failed']);
  });

  it('does not upload an image whose bytes are longer than the limit', async () => {
    const { deps } = fakes(nothing, new Uint8Array(101));
    const uploads: ProviderFileUpload[] = [];
    const media = createRunMedia([native], deps);
    const out = await media.materialize(withQuery(media), target(openai(['file-1'], uploads)), signal);
    expect(out[2]?.parts?.[0]?.type).toBe('text');
    expect(uploads).toEqual([]);
  });

  it('gives a provider without a file API a text reference', async () => {
    const { deps } = fakes();
    const media = createRunMedia([native], deps);
    const scripted: MediaTarget = { provider: openai(['file-1']), settings: { kind: 'scripted' }, model: 'scripted' };
    const out = await media.materialize(withQuery(media), scripted, signal);
    expect(JSON.stringify(out[2]?.parts)).toContain('this provider has no file API');
  });

  it('propagates a cancelled upload and uploads at the next call', async () => {
    const { deps } = fakes();
    const controller = new AbortController();
    const uploads: ProviderFileUpload[] = [];
    const provider: LlmProvider = {
      kind: 'openai',
      complete: async () => ({}) as CompletionResult,
      uploadFile: async (file) => {
        uploads.push(file);
        if (uploads.length === 1) {
          controller.abort(new Error('cancelled'));
          throw new Error('cancelled');
        }
        return 'file-2';
      },
    };
    const media = createRunMedia([native], deps);
    await expect(media.materialize(withQuery(media), target(provider), controller.signal)).rejects.toThrow('cancelled');
    const out = await media.materialize(withQuery(media), target(provider), signal);
    expect(out[2]?.parts).toEqual([{ type: 'file', artifact_id: 'a2', mime: 'image/png', file_id: 'file-2' }]);
  });
});
