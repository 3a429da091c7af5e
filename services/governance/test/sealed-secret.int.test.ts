import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOVERNANCE_OPEN_SECRET, isServiceError, refusalOf } from '@ars/contracts';
import type { SealedSecretView } from '@ars/contracts';
import { identityOf, startHarness, uniqueTenant } from './support/harness.ts';
import type { Harness } from './support/harness.ts';

const SEAL = '_governance.seal_secret';
const OPEN = '_governance.open_secret';

describe('_governance.seal_secret and _governance.open_secret', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });

  const secret = () => `token-${randomBytes(24).toString('hex')}`;

  async function seal(tenant: string, value: string, context = 'binding-1', purpose = 'oauth_grant') {
    const reply = (await h.call(SEAL, { tenant, purpose, context, secret: value }, identityOf(tenant))) as {
      sealed: SealedSecretView;
    };
    return reply.sealed;
  }

  async function refusal(promise: Promise<unknown>): Promise<string | undefined> {
    try {
      await promise;
    } catch (error) {
      return refusalOf(GOVERNANCE_OPEN_SECRET, error) ?? (isServiceError(error) ? error.code : 'thrown');
    }
    return undefined;
  }

  it('opens a record it sealed for the same tenant, purpose and context', async () => {
    const tenant = uniqueTenant();
    const value = secret();
    const sealed = await seal(tenant, value);
    expect(JSON.stringify(sealed)).not.toContain(value);
    const opened = await h.call(
      OPEN,
      { tenant, purpose: 'oauth_grant', context: 'binding-1', sealed },
      identityOf(tenant),
    );
    expect(opened).toEqual({ secret: value });
  });

  it('refuses unreadable for another context', async () => {
    const tenant = uniqueTenant();
    const sealed = await seal(tenant, secret());
    const body = { tenant, purpose: 'oauth_grant', context: 'binding-2', sealed };
    expect(await refusal(h.call(OPEN, body, identityOf(tenant)))).toBe('unreadable');
  });

  it('refuses unreadable for another purpose', async () => {
    const tenant = uniqueTenant();
    const sealed = await seal(tenant, secret());
    const body = { tenant, purpose: 'oauth_flow', context: 'binding-1', sealed };
    expect(await refusal(h.call(OPEN, body, identityOf(tenant)))).toBe('unreadable');
  });

  it('refuses unreadable for a record moved to another tenant', async () => {
    const [a, b] = [uniqueTenant(), uniqueTenant()];
    const sealed = await seal(a, secret());
    const body = { tenant: b, purpose: 'oauth_grant', context: 'binding-1', sealed };
    expect(await refusal(h.call(OPEN, body, identityOf(b)))).toBe('unreadable');
  });

  it('refuses unreadable for a tampered record', async () => {
    const tenant = uniqueTenant();
    const sealed = await seal(tenant, secret());
    const flipped = Buffer.from(sealed.ciphertext, 'base64');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    const body = {
      tenant,
      purpose: 'oauth_grant',
      context: 'binding-1',
      sealed: { ...sealed, ciphertext: flipped.toString('base64') },
    };
    expect(await refusal(h.call(OPEN, body, identityOf(tenant)))).toBe('unreadable');
  });

  it("refuses a body tenant that is not the caller's (seal and open)", async () => {
    const [a, b] = [uniqueTenant(), uniqueTenant()];
    const sealed = await seal(a, secret());
    const sealOther = h.call(SEAL, { tenant: a, purpose: 'oauth_grant', context: 'c', secret: 'x' }, identityOf(b));
    expect(await refusal(sealOther)).toBe('scope_mismatch');
    const openOther = h.call(OPEN, { tenant: a, purpose: 'oauth_grant', context: 'binding-1', sealed }, identityOf(b));
    expect(await refusal(openOther)).toBe('scope_mismatch');
  });

  it('never writes the secret to the log', async () => {
    const tenant = uniqueTenant();
    const value = secret();
    const sealed = await seal(tenant, value);
    await h.call(OPEN, { tenant, purpose: 'oauth_grant', context: 'binding-1', sealed }, identityOf(tenant));
    await refusal(h.call(OPEN, { tenant, purpose: 'oauth_flow', context: 'binding-1', sealed }, identityOf(tenant)));
    expect(h.logs.join('\n')).not.toContain(value);
    expect(h.logs.join('\n')).not.toContain(sealed.ciphertext);
  });
});
