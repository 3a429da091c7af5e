import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ARTIFACTS_OBJECT_STORE, openObjectStore, startNatsServer } from '@ars/bus';
import type { NatsServerHandle, ObjectStore } from '@ars/bus';
import { SCOPES } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { outcomeOf, startInProcess } from '@ars/service-kit/testing';
import type { CallOutcome, InProcessService } from '@ars/service-kit/testing';
import { artifactService } from '../../src/service.ts';

export const ADMIN = [SCOPES.admin] as const;
export const FLEET = [SCOPES.consoleFleet] as const;
export const NONE = [] as const;

export { caller, uniqueTenant } from '@ars/service-kit/testing';

/** A spawned nats-server with the artifact service in-process, called over NATS. */
export interface ArtifactHarness {
  readonly service: InProcessService;
  readonly objects: ObjectStore;
  /** Calls `method` as `identity` with `body`. */
  call(identity: VerifiedIdentity, method: string, body: unknown): Promise<unknown>;
  /** Like `call`, settled to data. */
  outcome(identity: VerifiedIdentity, method: string, body: unknown): Promise<CallOutcome>;
  /** Names of the live entries of the artifact object store. */
  objectNames(): Promise<string[]>;
  stop(): Promise<void>;
}

/** Starts nats-server and the artifact service with `env` (e.g. `ARTIFACT_MAX_BYTES`). */
export async function startArtifactHarness(env: Record<string, string> = {}): Promise<ArtifactHarness> {
  const storeDir = await mkdtemp(join(tmpdir(), 'ars-artifact-'));
  let nats: NatsServerHandle | undefined;
  let service: InProcessService | undefined;
  try {
    nats = await startNatsServer({ storeDir });
    service = await startInProcess(artifactService, { natsUrl: nats.url, env });
    const started = service;
    const server = nats;
    const objects = await openObjectStore(started.bus, ARTIFACTS_OBJECT_STORE);
    const call = (identity: VerifiedIdentity, method: string, body: unknown) =>
      started.rpc.call('artifact', method, identity, body, { timeoutMs: 30_000 });
    return {
      service: started,
      objects,
      call,
      outcome: (identity, method, body) => outcomeOf(call(identity, method, body)),
      objectNames: async () => (await objects.list()).map((info) => info.name).sort(),
      stop: async () => {
        await started.stop();
        await server.stop();
        await rm(storeDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await service?.stop();
    await nats?.stop();
    await rm(storeDir, { recursive: true, force: true });
    throw error;
  }
}

/** A small artifacts.put body. */
export function putBody(identity: Record<string, string>, text: string, extra: Record<string, unknown> = {}) {
  return {
    identity,
    content_base64: Buffer.from(text).toString('base64'),
    mime_type: 'text/plain',
    ...extra,
  };
}

/** The `artifact` member of an artifacts.put or artifacts.get result. */
export function artifactOf(result: unknown): Record<string, unknown> & { artifact_id: string } {
  return (result as { artifact: Record<string, unknown> & { artifact_id: string } }).artifact;
}
