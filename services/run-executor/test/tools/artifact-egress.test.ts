import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '@ars/contracts';
import type { ArtifactMetadata } from '@ars/contracts';
import { ARTIFACT_EGRESS_LIMITS, findArtifactRefs, resolveArtifactArgs } from '../../src/tools/artifact-egress.ts';
import type { ArtifactIo } from '../../src/tools/artifact-io.ts';
import { ToolError } from '../../src/tools/tool.ts';
import type { ToolOwner } from '../../src/tools/tool.ts';

const OWNER: ToolOwner = { tenant: 't1', user: 'u1', session: 's1' };

interface Stored {
  readonly owner: ToolOwner;
  readonly mime: string;
  readonly bytes: Buffer;
  readonly name?: string;
}

/** Artifacts in memory, read by the artifact service's rule: the owner's tenant and user only, else not_found. */
function memoryArtifacts(stored: Record<string, Stored>, failing?: ServiceError): ArtifactIo & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    async read(owner, artifactId, maxBytes) {
      reads.push(artifactId);
      if (failing !== undefined) throw failing;
      const entry = stored[artifactId];
      if (entry === undefined || entry.owner.tenant !== owner.tenant || entry.owner.user !== owner.user) {
        throw new ServiceError('not_found', `artifact ${artifactId} not found`);
      }
      const artifact: ArtifactMetadata = {
        artifact_id: artifactId,
        mime_type: entry.mime,
        size_bytes: entry.bytes.length,
        source: 'upload',
        namespace: 'default',
        ...entry.owner,
        checksum: `sha256:${createHash('sha256').update(entry.bytes).digest('hex')}`,
        ...(entry.name === undefined ? {} : { name: entry.name }),
        created_at: new Date(0).toISOString(),
      };
      const bytes = entry.bytes.subarray(0, maxBytes);
      return { artifact, bytes, truncated: entry.bytes.length > bytes.length };
    },
    write: () => Promise.reject(new Error('not written here')),
  };
}

const sha = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const TEXT = Buffer.from('héllo, MCP\n');
const BINARY = Buffer.from([0, 159, 146, 150, 255]);

const artifacts = () =>
  memoryArtifacts({
    'a-text': { owner: OWNER, mime: 'text/plain; charset=utf-8', bytes: TEXT, name: 'notes.txt' },
    'a-bin': { owner: OWNER, mime: 'image/png', bytes: BINARY },
    'a-json': { owner: OWNER, mime: 'application/json', bytes: Buffer.from('{"k":1}') },
    'a-bad-utf8': { owner: OWNER, mime: 'text/plain', bytes: BINARY },
    'a-other-user': { owner: { ...OWNER, user: 'u2' }, mime: 'text/plain', bytes: TEXT },
  });

async function refusal(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ToolError);
  return error as ToolError;
}

describe('finding artifact references in tool arguments', () => {
  it('finds artifact:// strings at any depth of objects and arrays, with their JSON Pointers', () => {
    const refs = findArtifactRefs({
      file: 'artifact://a-1',
      nested: { list: ['plain', 'artifact://a-2', { 'odd/key~': 'artifact://a-1' }] },
      count: 3,
      flag: true,
      none: null,
    });
    expect(refs).toEqual([
      { artifactId: 'a-1', path: '/file' },
      { artifactId: 'a-2', path: '/nested/list/1' },
      { artifactId: 'a-1', path: '/nested/list/2/odd~1key~0' },
    ]);
  });

  it('leaves strings that only mention a reference, and keys, alone', () => {
    const args = {
      text: 'see artifact://a-1 here',
      'artifact://a-2': 'value',
      upper: 'ARTIFACT://a-3',
      prose: 'artifact://a b',
    };
    expect(findArtifactRefs(args)).toEqual([]);
  });

  it('refuses a reference that names no valid artifact id', () => {
    for (const bad of ['artifact://', `artifact://${'x'.repeat(257)}`]) {
      expect(() => findArtifactRefs({ list: [bad] })).toThrow(
        'argument /list/0 is not a valid artifact reference (artifact://<artifact_id>)',
      );
    }
  });
});

describe('resolving artifact references', () => {
  it('returns the same arguments and no records when nothing is referenced, without reading', async () => {
    const io = artifacts();
    const args = { q: 'cats', deep: { list: [1, 'two'] } };
    const resolved = await resolveArtifactArgs(args, { owner: OWNER, artifacts: io, serverId: 'kb' });
    expect(resolved).toEqual({ args, records: [] });
    expect(resolved.args).toBe(args);
    expect(io.reads).toEqual([]);
  });

  it('puts a textual artifact in as its text and a binary one as base64, with a record each', async () => {
    const io = artifacts();
    const args = {
      doc: 'artifact://a-text',
      parts: [{ image: 'artifact://a-bin' }, 'keep'],
      again: 'artifact://a-text',
    };
    const resolved = await resolveArtifactArgs(args, { owner: OWNER, artifacts: io, serverId: 'kb' });
    expect(resolved.args).toEqual({
      doc: TEXT.toString('utf8'),
      parts: [{ image: BINARY.toString('base64') }, 'keep'],
      again: TEXT.toString('utf8'),
    });
    expect(args.doc).toBe('artifact://a-text');
    expect(resolved.records).toEqual([
      {
        ArtifactID: 'a-text',
        Name: 'notes.txt',
        MimeType: 'text/plain; charset=utf-8',
        SizeBytes: TEXT.length,
        SHA256: sha(TEXT),
        PassedAs: 'text',
        Paths: ['/doc', '/again'],
      },
      {
        ArtifactID: 'a-bin',
        Name: '',
        MimeType: 'image/png',
        SizeBytes: BINARY.length,
        SHA256: sha(BINARY),
        PassedAs: 'base64',
        Paths: ['/parts/0/image'],
      },
    ]);
    // One read per distinct artifact.
    expect(io.reads).toEqual(['a-text', 'a-bin']);
  });

  it('sends JSON as text, and a textual MIME type whose bytes are not UTF-8 as base64', async () => {
    const resolved = await resolveArtifactArgs(
      { a: 'artifact://a-json', b: 'artifact://a-bad-utf8' },
      { owner: OWNER, artifacts: artifacts(), serverId: 'kb' },
    );
    expect(resolved.args).toEqual({ a: '{"k":1}', b: BINARY.toString('base64') });
    expect(resolved.records.map((r) => r.PassedAs)).toEqual(['text', 'base64']);
  });

  it("refuses an artifact the run's owner may not read, like one that does not exist", async () => {
    for (const id of ['a-other-user', 'a-missing']) {
      const error = await refusal(
        resolveArtifactArgs({ f: `artifact://${id}` }, { owner: OWNER, artifacts: artifacts(), serverId: 'kb' }),
      );
      expect(error.errorClass).toBe('permanent');
      expect(error.message).toBe(
        `artifact ${id} cannot be passed to MCP server kb: it does not exist or the run's owner may not read it`,
      );
    }
  });

  it('makes an artifact service that does not answer a transient failure', async () => {
    const io = memoryArtifacts({}, new ServiceError('unavailable', 'no responders'));
    const error = await refusal(
      resolveArtifactArgs({ f: 'artifact://a-1' }, { owner: OWNER, artifacts: io, serverId: 'kb' }),
    );
    expect(error.errorClass).toBe('transient');
    expect(error.message).toBe('artifact a-1 could not be read: no responders');
  });

  it('refuses artifacts that together exceed the byte cap, naming the size and the cap', async () => {
    const limits = { ...ARTIFACT_EGRESS_LIMITS, maxBytes: TEXT.length + 2 };
    const io = artifacts();
    const ok = await resolveArtifactArgs(
      { f: 'artifact://a-text' },
      { owner: OWNER, artifacts: io, serverId: 'kb' },
      limits,
    );
    expect(ok.records).toHaveLength(1);
    const error = await refusal(
      resolveArtifactArgs(
        { f: 'artifact://a-text', g: 'artifact://a-bin' },
        { owner: OWNER, artifacts: io, serverId: 'kb' },
        limits,
      ),
    );
    expect(error.errorClass).toBe('permanent');
    expect(error.message).toBe(
      `artifact a-bin is ${BINARY.length} bytes: the artifacts of one MCP tool call may total at most ${limits.maxBytes} bytes (2 left)`,
    );
  });

  it('refuses more distinct artifacts than the cap before reading any', async () => {
    const io = artifacts();
    const args = { list: ['artifact://a-text', 'artifact://a-bin', 'artifact://a-json', 'artifact://a-text'] };
    const limits = { ...ARTIFACT_EGRESS_LIMITS, maxArtifacts: 2 };
    const error = await refusal(resolveArtifactArgs(args, { owner: OWNER, artifacts: io, serverId: 'kb' }, limits));
    expect(error.message).toBe('the arguments name 3 artifacts; at most 2 go with one MCP tool call');
    expect(io.reads).toEqual([]);
  });

  it('refuses resolved arguments whose JSON exceeds what one call carries', async () => {
    const limits = { ...ARTIFACT_EGRESS_LIMITS, maxJsonBytes: 16 };
    const error = await refusal(
      resolveArtifactArgs({ f: 'artifact://a-text' }, { owner: OWNER, artifacts: artifacts(), serverId: 'kb' }, limits),
    );
    expect(error.message).toMatch(
      /^the arguments with their artifacts are \d+ bytes of JSON; one MCP tool call carries at most 16$/,
    );
  });

  it('refuses references the egress policy does not allow, before reading any', async () => {
    const io = artifacts();
    const error = await refusal(
      resolveArtifactArgs(
        { f: 'artifact://a-text' },
        { owner: OWNER, artifacts: io, serverId: 'kb', refusal: "the run's sources disable server kb" },
      ),
    );
    expect(error.message).toBe("artifacts may not be passed to MCP server kb: the run's sources disable server kb");
    expect(io.reads).toEqual([]);
  });
});
