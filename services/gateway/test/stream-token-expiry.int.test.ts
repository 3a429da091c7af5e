import { afterEach, describe, expect, it } from 'vitest';
import { revocationKeys, tokenFingerprint } from '@ars/auth';
import { createLogger } from '@ars/telemetry';
import { RevocationList } from '../src/auth/revocation-list.ts';
import { createHarness } from './support/harness.ts';
import type { Harness } from './support/harness.ts';
import { ISSUER } from './support/tokens.ts';
import { subscribeLive } from './support/int-gateway.ts';
import type { IntStream } from './support/int-gateway.ts';

// An open `GET /v1/events` ends when its token stops being accepted: at `exp`
// plus the verifier's clock tolerance, or when the token is revoked; its last
// frame is `auth.rejected` (Reason `expired` or `revoked`), addressed to that
// subscriber only, so that the client fetches a new token and resumes with
// Last-Event-ID (issue 32, item 2). A real SSE stream over HTTP, a real
// short-lived token.

const TOLERANCE_SECONDS = 1;
const logger = createLogger({ name: 'stream-token-expiry', level: 'silent' });

let h: Harness | undefined;
let stream: IntStream | undefined;

afterEach(async () => {
  stream?.close();
  stream = undefined;
  await h?.close();
  h = undefined;
});

async function start(revocations?: RevocationList): Promise<{ harness: Harness; base: string }> {
  const harness = await createHarness({
    clockToleranceSeconds: TOLERANCE_SECONDS,
    ...(revocations === undefined ? {} : { revocations }),
  });
  h = harness;
  const base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  return { harness, base };
}

const mine = { tenant: 't1', user: 'u1', session: 's1' } as const;

function append(harness: Harness, run: string): number {
  return harness.log.append({ ...mine, run, type: 'task.started', payload: { TaskID: run, PriorState: 'pending' } });
}

describe('an event stream whose token stops being accepted', () => {
  it('ends at exp plus the clock tolerance with an auth.rejected notice naming the expiry', async () => {
    const { harness, base } = await start();
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = harness.token({ exp });
    stream = await subscribeLive(base, token);
    const first = append(harness, 'run-1');
    await stream.reader.frameCount(1);

    await stream.reader.waitEnd(10_000);
    const endedAt = Date.now();
    expect(endedAt).toBeGreaterThanOrEqual((exp + TOLERANCE_SECONDS) * 1000 - 50);
    expect(endedAt).toBeLessThan((exp + TOLERANCE_SECONDS) * 1000 + 2_000);

    const frames = stream.reader.frames;
    const notice = frames.at(-1)!;
    expect(notice.frame).toMatchObject({
      type: 'auth.rejected',
      sequence: first,
      ...mine,
      run: '',
      payload: { Reason: 'expired', KID: harness.key.kid, Issuer: ISSUER, Subject: '' },
    });
    // Without an id line: the client's Last-Event-ID stays at the last event it got.
    expect(notice.id).toBeUndefined();
    expect(frames.map((block) => block.frame.type)).toEqual(['task.started', 'auth.rejected']);
  });

  it('delivers nothing after the close, and the token is refused on a new subscription', async () => {
    const { harness, base } = await start();
    const token = harness.token({ exp: Math.floor(Date.now() / 1000) + 1 });
    stream = await subscribeLive(base, token);
    await stream.reader.waitEnd(10_000);
    append(harness, 'run-after');
    const again = await fetch(`${base}/v1/events`, { headers: { authorization: `Bearer ${token}` } });
    expect(again.status).toBe(401);
    expect(await again.json()).toMatchObject({ code: 'auth_rejected' });
    expect(stream.reader.frames.map((block) => block.frame.type)).toEqual(['auth.rejected']);
  });

  it('ends with an auth.rejected notice naming the revocation when its token is revoked', async () => {
    const revocations = new RevocationList({ logger });
    const { harness, base } = await start(revocations);
    const token = harness.token();
    stream = await subscribeLive(base, token);
    const first = append(harness, 'run-1');
    await stream.reader.frameCount(1);
    const now = new Date();
    revocations.add(revocationKeys({ fingerprint: tokenFingerprint(token) }), {
      reason: 'rotated',
      revoked_at: now.toISOString(),
      expires_at: new Date(now.getTime() + 3_600_000).toISOString(),
      tenant: 't1',
      user: 'u1',
    });
    await stream.reader.waitEnd(5_000);
    expect(stream.reader.frames.at(-1)?.frame).toMatchObject({
      type: 'auth.rejected',
      sequence: first,
      payload: { Reason: 'revoked', KID: harness.key.kid, Issuer: ISSUER, Subject: '' },
    });
  });

  it('keeps open a stream whose token is still accepted', async () => {
    const { harness, base } = await start();
    stream = await subscribeLive(base, harness.token());
    append(harness, 'run-1');
    await stream.reader.frameCount(1);
    expect(stream.reader.ended).toBe(false);
  });
});
