import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { recallRunMedia } from '../../src/engine/multimodal-recall.ts';
import { fileKey } from '../../src/engine/multimodal-inputs.ts';
import { FAKE_OPENAI_BEHAVIOURS, startFakeOpenAi } from '@ars/testkit';
import type { FakeOpenAi, FakeOpenAiBehaviour, FakeOpenAiRequest } from '@ars/testkit';
import { newCaller } from './harness.ts';
import { startSystemHarness } from './system-harness.ts';
import type { SystemHarness } from './system-harness.ts';

/**
 * Input images reaching an OpenAI-compatible model (the fake server of
 * `startFakeOpenAi` of @ars/testkit), with the real artifact service holding their bytes and
 * the real agent-registry holding the agent: an inline image goes as an
 * `image_url` data URL with every call, a provider_native one is uploaded
 * once to `POST /v1/files` and named by its file id, and a model that takes
 * no images gets a text reference.
 */

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);

/** A PNG signature and a few bytes: the artifact service and the model see bytes, not pixels. */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4, 5]);

interface WirePart {
  type: string;
  text?: string;
  image_url?: { url: string };
  file?: { file_id: string };
}

/** The content parts of the query message (the last user message before the first assistant one). */
function queryParts(request: FakeOpenAiRequest): WirePart[] {
  const messages = request.body.messages as { role: string; content: unknown }[];
  const user = messages.filter((m) => m.role === 'user').at(-1);
  return Array.isArray(user?.content) ? (user.content as WirePart[]) : [];
}

describe('multimodal inputs', () => {
  let h: SystemHarness;
  let fake: FakeOpenAi;
  const admin = (caller: VerifiedIdentity) => ({ ...caller, scopes: ['admin'] });

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    h = await startSystemHarness(['artifact', 'agent-registry']);
  });

  afterAll(async () => {
    await h?.stop();
    await fake?.stop();
  });

  async function upload(caller: VerifiedIdentity, content: Buffer, mime: string): Promise<string> {
    const answer = (await h.call(
      'artifact',
      'artifacts.put',
      { content_base64: content.toString('base64'), mime_type: mime },
      caller,
    )) as { artifact: { artifact_id: string } };
    return answer.artifact.artifact_id;
  }

  /** An agent on the fake server's `behaviour` with `model`, for the caller's tenant. */
  async function agent(caller: VerifiedIdentity, id: string, behaviour: FakeOpenAiBehaviour, model: string) {
    await h.call(
      'agent-registry',
      'agent_config.set_revision',
      {
        agent_id: id,
        config: {
          llm_provider: { provider_name: `local-${id}`, provider: 'openai', base_url: fake.url(behaviour), model },
        },
      },
      admin(caller),
    );
  }

  /** Runs `agentId` on one image with `disposition`; the fake's requests of that run, by the image's id. */
  async function runWithImage(caller: VerifiedIdentity, agentId: string, disposition: string) {
    const image = await upload(caller, PNG, 'image/png');
    const { taskId, watch } = await h.run(caller, {
      query: `describe ${image}`,
      agent_id: agentId,
      input_artifact_ids: [image],
      input_artifact_dispositions: { [image]: disposition },
    });
    const requests = fake.requests.filter((r) => JSON.stringify(r.body.messages).includes(`describe ${image}`));
    const identity = { tenant: caller.tenant, user: caller.user, session: caller.session, run: taskId };
    return { image, taskId, watch, requests, identity };
  }

  it('sends an inline image as a data URL with every call and publishes llm.image.materialized once', async () => {
    const caller = newCaller();
    await agent(caller, 'seer', FAKE_OPENAI_BEHAVIOURS.toolThenAnswer, 'gpt-4o-mini');
    const { image, watch, requests, identity } = await runWithImage(caller, 'seer', 'inline');
    expect(watch.types()).toContain('task.completed');
    expect(ofType(watch.events, 'task.input_disposition.resolved').map((e) => e.payload)).toEqual([
      expect.objectContaining({ artifact_id: image, disposition: 'inline', degraded: false }),
    ]);
    // Two calls (a tool call, then the answer), the image with each.
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(queryParts(request)).toEqual([
        { type: 'text', text: `describe ${image}` },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
      ]);
    }
    expect(ofType(watch.events, 'llm.image.materialized').map((e) => e.payload)).toEqual([
      {
        Identity: identity,
        Model: 'gpt-4o-mini',
        ArtifactRef: image,
        MIME: 'image/png',
        SizeBytes: PNG.length,
        OccurredAt: expect.any(String),
      },
    ]);
    expect(ofType(watch.events, 'llm.provider_file.uploaded')).toEqual([]);
  });

  it('uploads a provider_native image once, names it by file id in every call and publishes llm.provider_file.uploaded', async () => {
    const caller = newCaller();
    await agent(caller, 'filer', FAKE_OPENAI_BEHAVIOURS.toolThenAnswer, 'gpt-4o');
    const before = fake.uploads.length;
    const { image, taskId, watch, requests, identity } = await runWithImage(caller, 'filer', 'provider_native');
    expect(watch.types()).toContain('task.completed');
    expect(ofType(watch.events, 'task.input_disposition.resolved').map((e) => e.payload)).toEqual([
      expect.objectContaining({ artifact_id: image, disposition: 'provider_native', degraded: false }),
    ]);
    const uploads = fake.uploads.slice(before);
    expect(uploads).toHaveLength(1);
    const [file] = uploads;
    expect(file).toMatchObject({ purpose: 'user_data', filename: `${image}.png`, mime: 'image/png' });
    expect(file?.bytes.equals(PNG)).toBe(true);
    expect(file?.fields['expires_after[seconds]']).toBe(String(30 * 24 * 3600));
    // Both calls name the one upload.
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(queryParts(request)).toEqual([
        { type: 'text', text: `describe ${image}` },
        { type: 'file', file: { file_id: file?.id } },
      ]);
    }
    expect(ofType(watch.events, 'llm.provider_file.uploaded').map((e) => e.payload)).toEqual([
      {
        Identity: identity,
        Provider: 'local-filer',
        Model: 'gpt-4o',
        ArtifactRef: image,
        MIME: 'image/png',
        Modality: 'image',
        FileID: file?.id,
        SizeBytes: PNG.length,
        OccurredAt: expect.any(String),
      },
    ]);
    expect(ofType(watch.events, 'llm.image.materialized')).toEqual([]);
    // What a redelivered claim of the run would recall from the stream instead of uploading again.
    const recalled = await recallRunMedia(h.bus, { ...identity, run: taskId });
    expect(recalled.files.get(fileKey('local-filer', image))).toBe(file?.id);
  });

  it('shows the scripted provider an inline image, which it reports by size and digest', async () => {
    const caller = newCaller();
    const image = await upload(caller, PNG, 'image/png');
    const { taskId, watch } = await h.run(caller, {
      query: '#script inspect',
      input_artifact_ids: [image],
      input_artifact_dispositions: { [image]: 'inline' },
    });
    const trace = ofType(watch.events, 'planner.decision').map((e) => String(e.payload.ReasoningTrace))[0] ?? '{}';
    const inspected = JSON.parse(trace) as { system: string; parts: string[] };
    expect(inspected.parts).toEqual([
      expect.stringMatching(new RegExp(`^image ${image} image/png ${PNG.length} bytes sha256:`)),
    ]);
    expect(inspected.system).toContain(
      `- ${image} (image/png, ${PNG.length} bytes): attached to the query as an image.`,
    );
    expect(ofType(watch.events, 'llm.image.materialized').map((e) => e.payload)).toEqual([
      expect.objectContaining({
        Model: 'scripted',
        ArtifactRef: image,
        Identity: expect.objectContaining({ run: taskId }),
      }),
    ]);
  });

  it('gives a model that takes no images a text reference instead (not_text)', async () => {
    const caller = newCaller();
    await agent(caller, 'blind', FAKE_OPENAI_BEHAVIOURS.toolThenAnswer, 'gpt-3.5-turbo');
    const { image, watch, requests } = await runWithImage(caller, 'blind', 'inline');
    expect(watch.types()).toContain('task.completed');
    expect(ofType(watch.events, 'task.input_disposition.resolved').map((e) => e.payload)).toEqual([
      expect.objectContaining({
        artifact_id: image,
        disposition: 'ref',
        degraded: true,
        degraded_from: 'inline',
        degradation_reason: 'not_text',
      }),
    ]);
    for (const request of requests) {
      expect(queryParts(request)).toEqual([]);
      const system = (request.body.messages as { role: string; content: string }[])[0]?.content ?? '';
      expect(system).toContain(`- ${image} (image/png, ${PNG.length} bytes): by reference`);
    }
    expect(ofType(watch.events, 'llm.image.materialized')).toEqual([]);
  });

  it('sends a text reference when the provider refuses the upload, and does not try again at the next step', async () => {
    const caller = newCaller();
    await agent(caller, 'nofiles', FAKE_OPENAI_BEHAVIOURS.noFiles, 'gpt-4o');
    const attempts = () => fake.fileRequests.filter((b) => b === FAKE_OPENAI_BEHAVIOURS.noFiles).length;
    const before = attempts();
    const { image, watch, requests } = await runWithImage(caller, 'nofiles', 'provider_native');
    expect(watch.types()).toContain('task.completed');
    expect(attempts() - before).toBe(1);
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      const parts = queryParts(request);
      expect(parts.map((p) => p.type)).toEqual(['text', 'text']);
      expect(parts[1]?.text).toContain(
        `input image ${image} (image/png) is not attached: its upload to the provider failed`,
      );
    }
    expect(ofType(watch.events, 'llm.provider_file.uploaded')).toEqual([]);
  });
});
