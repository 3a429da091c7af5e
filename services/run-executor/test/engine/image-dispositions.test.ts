import { describe, expect, it } from 'vitest';
import { planInputArtifacts, resolveDisposition } from '../../src/engine/dispositions.ts';
import type { DispositionContext, MediaSupport } from '../../src/engine/dispositions.ts';
import type { ArtifactIo } from '../../src/tools/artifact-io.ts';
import type { ArtifactMetadata } from '@ars/contracts';

/** Image dispositions: inline and provider_native images for a model that takes them, the limits, the fallbacks. */

const media: MediaSupport = { acceptsImages: true, providerFiles: true, imageMaxBytes: 100, inlineImagesMaxBytes: 150 };
const context: DispositionContext = { exposedTools: new Set(['artifact_read']), inlineMaxBytes: 10, media };
const png = { artifact_id: 'i1', mime_type: 'image/png', size_bytes: 80 };
const owner = { tenant: 't', user: 'u', session: 's' };

/** An artifact io whose artifacts hold `sizes[id]` bytes (a missing id: the read fails). */
function io(sizes: Record<string, number>): ArtifactIo & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    async read(_owner, artifactId, maxBytes) {
      reads.push(artifactId);
      const size = sizes[artifactId];
      if (size === undefined) throw new Error('not_found');
      const bytes = new Uint8Array(Math.min(size, maxBytes)).fill(7);
      return { artifact: {} as ArtifactMetadata, bytes, truncated: size > maxBytes };
    },
    write: async () => ({}) as ArtifactMetadata,
  };
}

describe('image dispositions', () => {
  it('keeps inline and provider_native for an image the model takes, above the text inline limit', () => {
    expect(resolveDisposition({ ...png, disposition: 'inline' }, context)).toMatchObject({
      disposition: 'inline',
      degraded: false,
      modality: 'image',
    });
    expect(resolveDisposition({ ...png, disposition: 'provider_native' }, context)).toMatchObject({
      disposition: 'provider_native',
      degraded: false,
      modality: 'image',
    });
  });

  it('degrades an image over the image limit too_large, whichever way it was to go', () => {
    for (const disposition of ['inline', 'provider_native']) {
      expect(resolveDisposition({ ...png, size_bytes: 101, disposition }, context)).toMatchObject({
        disposition: 'ref',
        degraded_from: disposition,
        degradation_reason: 'too_large',
      });
    }
  });

  it('degrades an image for a model that takes none: inline not_text, provider_native unsupported', () => {
    const blind = { ...context, media: { ...media, acceptsImages: false } };
    expect(resolveDisposition({ ...png, disposition: 'inline' }, blind)).toMatchObject({
      disposition: 'ref',
      degradation_reason: 'not_text',
    });
    expect(resolveDisposition({ ...png, disposition: 'provider_native' }, blind)).toMatchObject({
      disposition: 'ref',
      degradation_reason: 'provider_native_unsupported',
    });
  });

  it('degrades provider_native for a provider without a file API, and for a type models are not sent', () => {
    const noFiles = { ...context, media: { ...media, providerFiles: false } };
    expect(resolveDisposition({ ...png, disposition: 'provider_native' }, noFiles)).toMatchObject({
      degradation_reason: 'provider_native_unsupported',
    });
    expect(
      resolveDisposition({ ...png, mime_type: 'image/svg+xml', disposition: 'provider_native' }, context),
    ).toMatchObject({ degradation_reason: 'provider_native_unsupported' });
    expect(resolveDisposition({ ...png, mime_type: 'image/tiff', disposition: 'inline' }, context)).toMatchObject({
      degradation_reason: 'not_text',
    });
  });

  it('reads inline images at the claim and leaves provider_native ones for the upload', async () => {
    const artifacts = io({ i1: 80, i2: 60 });
    const plan = await planInputArtifacts(
      [
        { ...png, disposition: 'inline' },
        { ...png, artifact_id: 'i2', size_bytes: 60, disposition: 'provider_native' },
      ],
      context,
      artifacts,
      owner,
    );
    expect(artifacts.reads).toEqual(['i1']);
    expect(plan.images.map((i) => [i.artifact_id, i.disposition, i.bytes?.length])).toEqual([
      ['i1', 'inline', 80],
      ['i2', 'provider_native', undefined],
    ]);
    expect(plan.prompt).toBe(
      'Input artifacts:\n- i1 (image/png, 80 bytes): attached to the query as an image.\n' +
        '- i2 (image/png, 60 bytes): attached to the query as an image.',
    );
  });

  it("degrades inline images past the run's total, in input order, without reading them", async () => {
    const artifacts = io({ i1: 80, i2: 80 });
    const plan = await planInputArtifacts(
      [
        { ...png, disposition: 'inline' },
        { ...png, artifact_id: 'i2', disposition: 'inline' },
      ],
      context,
      artifacts,
      owner,
    );
    expect(plan.resolved.map((d) => [d.artifact_id, d.disposition, d.degradation_reason])).toEqual([
      ['i1', 'inline', undefined],
      ['i2', 'ref', 'too_large'],
    ]);
    expect(artifacts.reads).toEqual(['i1']);
    expect(plan.images.map((i) => i.artifact_id)).toEqual(['i1']);
  });

  it('degrades an inline image whose bytes are longer than its metadata said (too_large), or unreadable (read_failed)', async () => {
    const plan = await planInputArtifacts(
      [
        { ...png, disposition: 'inline' },
        { ...png, artifact_id: 'gone', size_bytes: 10, disposition: 'inline' },
      ],
      context,
      io({ i1: 500 }),
      owner,
    );
    expect(plan.resolved.map((d) => [d.disposition, d.degradation_reason])).toEqual([
      ['ref', 'too_large'],
      ['ref', 'read_failed'],
    ]);
    expect(plan.images).toEqual([]);
    expect(plan.prompt).toContain('- i1 (image/png, 80 bytes): by reference');
  });
});
