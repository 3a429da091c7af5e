import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintKey, tokenFingerprint, tokenIdKey } from '@ars/auth';
import { REVOCATIONS_BUCKET, connectBus, decodeStoredEvent, eventFilterSubject, openKv, readEvents } from '@ars/bus';
import type { Bus } from '@ars/bus';
import type { EventFrame } from '@ars/contracts';
import { startTestNats, waitFor } from '@ars/testkit';
import type { TestNats } from '@ars/testkit';
import { routeOf } from './support/bodies.ts';
import { startIntGateway, triple } from './support/int-gateway.ts';
import type { IntGateway } from './support/int-gateway.ts';
import { startServiceProcess } from './support/service-process.ts';
import type { ServiceProcess } from './support/service-process.ts';
import { AUDIENCE, ISSUER, claims, es256Key, signToken } from './support/tokens.ts';

const PROBE = routeOf('runtime.info');
const ROTATE = routeOf('auth.rotate_token');

let nats: TestNats;
let dataDir: string;
let governance: ServiceProcess;
let jwks: Server;
let bus: Bus;
const idp = es256Key();
const gateways: IntGateway[] = [];
let productionEnv: Record<string, string>;

async function call(gateway: IntGateway, path: string, token: string, body: unknown = { identity: {} }) {
  const response = await fetch(`${gateway.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A token of the test identity provider: admin, with a jti. */
function idpToken(identity: { tenant: string; user: string; session: string }): string {
  return signToken(idp, claims({ ...identity, scopes: ['admin'], jti: randomUUID() }));
}

async function production(): Promise<IntGateway> {
  const gateway = await startIntGateway(nats.url, productionEnv);
  gateways.push(gateway);
  return gateway;
}

/** Every stored event of `tenant` of `type`, oldest first. */
async function storedEvents(tenant: string, type: string): Promise<EventFrame[]> {
  const read = await readEvents(bus, { filterSubject: eventFilterSubject({ tenant, type }) });
  const frames: EventFrame[] = [];
  try {
    for await (const record of read) {
      frames.push({ ...(decodeStoredEvent(record.data) as unknown as EventFrame), sequence: record.seq });
    }
  } finally {
    await read.close();
  }
  return frames;
}

beforeAll(async () => {
  nats = await startTestNats();
  dataDir = await mkdtemp(join(tmpdir(), 'ars-rotation-'));
  jwks = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ keys: [idp.jwk] }));
  });
  await new Promise<void>((done) => jwks.listen(0, '127.0.0.1', done));
  const address = jwks.address() as { port: number };
  const keyFile = join(dataDir, 'rotation.pem');
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  await writeFile(keyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, { mode: 0o600 });
  productionEnv = {
    ARS_AUTH_MODE: 'production',
    ARS_AUTH_ISSUER: ISSUER,
    ARS_AUTH_AUDIENCE: AUDIENCE,
    ARS_AUTH_JWKS_URL: `http://127.0.0.1:${address.port}/jwks.json`,
    ARS_ROTATION_SIGNING_KEY_FILE: keyFile,
  };
  governance = await startServiceProcess('governance', { natsUrl: nats.url, dataDir: join(dataDir, 'governance') });
  bus = await connectBus({ servers: nats.url, name: 'rotation-int-reader' });
});

afterAll(async () => {
  await Promise.all(gateways.map((gateway) => gateway.stop()));
  await bus?.close();
  await governance?.stop();
  await new Promise((done) => jwks?.close(done));
  await nats?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('auth.rotate_token across gateway replicas (production mode, shared rotation key)', () => {
  it('refuses the old token on every replica at once and accepts the new one everywhere', async () => {
    const [a, b] = [await production(), await production()];
    const old = idpToken(triple('rot'));
    expect((await call(a, PROBE, old)).status).toBe(200);
    expect((await call(b, PROBE, old)).status).toBe(200);

    const rotated = await call(a, ROTATE, old, { identity: {}, ttl_seconds: 600 });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const fresh = rotated.body.token as string;

    const [oldOnA, oldOnB, newOnA, newOnB] = await Promise.all([
      call(a, PROBE, old),
      call(b, PROBE, old),
      call(a, PROBE, fresh),
      call(b, PROBE, fresh),
    ]);
    expect([oldOnA.status, oldOnB.status]).toEqual([401, 401]);
    expect(oldOnB.body).toMatchObject({ code: 'auth_rejected', message: expect.stringMatching(/^revoked: /) });
    expect([newOnA.status, newOnB.status]).toEqual([200, 200]);
  });

  it('has governance write the revocation under the token fingerprint and jti keys', async () => {
    const gateway = await production();
    const identity = triple('keys');
    const jti = randomUUID();
    const old = signToken(idp, claims({ ...identity, scopes: ['admin'], jti }));
    const rotated = await call(gateway, ROTATE, old);
    expect(rotated.body).toMatchObject({ revoked_token_id: jti });
    const kv = await openKv(bus, REVOCATIONS_BUCKET);
    for (const key of [fingerprintKey(tokenFingerprint(old)), tokenIdKey(jti)]) {
      const entry = await kv.get(key);
      expect(entry?.json(), key).toMatchObject({
        reason: 'rotated',
        tenant: identity.tenant,
        user: identity.user,
        replaced_by: rotated.body.token_id,
      });
    }
  });

  it('refuses the old token on a replica started after the rotation', async () => {
    const gateway = await production();
    const old = idpToken(triple('late'));
    expect((await call(gateway, ROTATE, old)).status).toBe(200);
    const late = await production();
    expect((await call(late, PROBE, old)).status).toBe(401);
  });

  it('publishes auth.rejected for the refused token and the redacted rotation audit', async () => {
    const gateway = await production();
    const identity = triple('audit');
    const old = idpToken(identity);
    const rotated = await call(gateway, ROTATE, old);
    await call(gateway, PROBE, old);
    // auth.rejected is published beside the 401, not before it.
    const [rejected] = await waitFor(async () => {
      const frames = await storedEvents(identity.tenant, 'auth.rejected');
      return frames.length > 0 ? frames : undefined;
    });
    expect(rejected).toMatchObject({
      tenant: identity.tenant,
      user: identity.user,
      session: identity.session,
      payload: { Reason: 'revoked', KID: idp.kid, Issuer: ISSUER, Subject: '' },
    });
    const audits = await storedEvents(identity.tenant, 'audit.admin_scope_used');
    expect(audits.map((frame) => frame.payload.Method)).toContain('auth.rotate_token');
    expect(JSON.stringify(audits)).not.toContain(rotated.body.token as string);
    expect(JSON.stringify(audits)).not.toContain(old);
  });

  it('rotates a rotated token again', async () => {
    const gateway = await production();
    const first = await call(gateway, ROTATE, idpToken(triple('again')));
    const second = await call(gateway, ROTATE, first.body.token as string);
    expect(second.status).toBe(200);
    expect(second.body.revoked_token_id).toBe(first.body.token_id);
    expect((await call(gateway, PROBE, first.body.token as string)).status).toBe(401);
    expect((await call(gateway, PROBE, second.body.token as string)).status).toBe(200);
  });
});

describe('auth.rotate_token in production without a rotation key', () => {
  it('answers 501 unimplemented and the token keeps working', async () => {
    const { ARS_ROTATION_SIGNING_KEY_FILE: _key, ...withoutKey } = productionEnv;
    const gateway = await startIntGateway(nats.url, withoutKey);
    gateways.push(gateway);
    const token = idpToken(triple('nokey'));
    const response = await call(gateway, ROTATE, token);
    expect(response.status).toBe(501);
    expect(response.body).toMatchObject({ code: 'unimplemented' });
    expect((await call(gateway, PROBE, token)).status).toBe(200);
  });
});

describe('auth.rotate_token in dev mode', () => {
  it('rotates a bootstrap token with the dev issuer', async () => {
    const gateway = await startIntGateway(nats.url);
    gateways.push(gateway);
    const old = await gateway.token(triple('dev'), ['admin']);
    const rotated = await call(gateway, ROTATE, old);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect((await call(gateway, PROBE, old)).status).toBe(401);
    expect((await call(gateway, PROBE, rotated.body.token as string)).status).toBe(200);
  });
});
