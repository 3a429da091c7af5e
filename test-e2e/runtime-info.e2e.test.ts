import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, isArsError } from '@ars/client';
import { mintToken, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestSystem } from '@ars/testkit';

const RUNTIME_INFO_MEMBERS = [
  'build_commit',
  'build_go_version',
  'build_version',
  'capabilities',
  'display_name',
  'instance_id',
  'protocol_version',
  'uptime_seconds',
];

describe('runtime.info', () => {
  let sys: TestSystem;

  beforeAll(async () => {
    sys = await startTestSystem();
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('answers the dev token with exactly the eight members of the spec', async () => {
    const info = await sys.client().call<Record<string, unknown>>('runtime.info', { identity: {} });
    expect(Object.keys(info).sort()).toEqual(RUNTIME_INFO_MEMBERS);
    expect(info['protocol_version']).toBe('0.1.0');
    expect(Array.isArray(info['capabilities'])).toBe(true);
    expect(Number.isInteger(info['uptime_seconds'])).toBe(true);
  });

  it('answers a freshly bootstrapped scopeless token', async () => {
    const identity = uniqueIdentity('info');
    const token = await mintToken(sys.baseUrl, identity);
    const info = await sys.client({ token }).call<Record<string, unknown>>('runtime.info', { identity: {} });
    expect(info['protocol_version']).toBe('0.1.0');
  });

  it('refuses a call without a token with 401 identity_required', async () => {
    const error = await createClient({ baseUrl: sys.baseUrl })
      .call('runtime.info', { identity: {} })
      .catch((caught: unknown) => caught);
    expect(isArsError(error) && { status: error.status, code: error.code }).toEqual({
      status: 401,
      code: 'identity_required',
    });
  });
});
