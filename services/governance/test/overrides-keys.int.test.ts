import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GovernanceGetTenantOverridesResponse,
  GovernanceRotateKeyResponse,
  GovernanceSetTenantOverridesResponse,
} from '@ars/contracts';
import { CONFIG_CHANGED_SUBJECT } from '@ars/bus';
import { createLogger } from '@ars/telemetry';
import { DEV_KEK_FILE, loadKeyEncryptionKey } from '../src/secrets/key-encryption-key.ts';
import type { Harness } from './support/harness.ts';
import { identityOf, startHarness, uniqueTenant } from './support/harness.ts';

function keysOf(payload: Record<string, unknown>): string[] {
  return Object.keys(payload).sort();
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe('tenant overrides and provider keys', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ inMemoryStore: false });
  });
  afterAll(async () => h?.stop());

  describe('tenant overrides', () => {
    it('announces each write on ars.cfg.changed (executors drop the configurations they keep), and no read', async () => {
      const notices: string[] = [];
      const sub = h.service.bus.nc.subscribe(CONFIG_CHANGED_SUBJECT, {
        callback: (error, msg) => void (error === null && notices.push(new TextDecoder().decode(msg.data))),
      });
      await h.service.bus.nc.flush();
      try {
        const admin = identityOf(uniqueTenant(), ['admin'], 'admin');
        await h.call('governance.get_tenant_overrides', { identity: {} }, admin);
        await h.service.bus.nc.flush();
        expect(notices).toEqual([]);
        await h.call('governance.set_tenant_overrides', { identity: {}, overrides: { model: 'gpt-x' } }, admin);
        await h.call('governance.set_tenant_overrides', { identity: {}, overrides: { model: null } }, admin);
        await h.service.bus.nc.flush();
        expect(notices).toEqual(['governance', 'governance']);
      } finally {
        sub.unsubscribe();
      }
    });

    it('reads no overrides for a fresh tenant', async () => {
      const tenant = uniqueTenant();
      const result = GovernanceGetTenantOverridesResponse.parse(
        await h.call('governance.get_tenant_overrides', { identity: {} }, identityOf(tenant, ['admin'])),
      );
      expect(result).toEqual({ tenant, overrides: {} });
    });

    it('sets members, publishes governance.tenant_overrides_set, and clears a member with null', async () => {
      const tenant = uniqueTenant();
      const admin = identityOf(tenant, ['admin'], 'admin');
      const first = GovernanceSetTenantOverridesResponse.parse(
        await h.call(
          'governance.set_tenant_overrides',
          { identity: {}, overrides: { model: 'gpt-x', temperature: 0.4, extra_instructions: 'Be terse.' } },
          admin,
        ),
      );
      expect(first.overrides).toEqual({ model: 'gpt-x', temperature: 0.4, extra_instructions: 'Be terse.' });
      const second = GovernanceSetTenantOverridesResponse.parse(
        await h.call(
          'governance.set_tenant_overrides',
          { identity: {}, overrides: { temperature: null, max_tokens: 256, reasoning_effort: 'low' } },
          admin,
        ),
      );
      expect(second.overrides).toEqual({
        model: 'gpt-x',
        extra_instructions: 'Be terse.',
        max_tokens: 256,
        reasoning_effort: 'low',
      });
      await h.waitForEvent(
        (e) => e.type === 'governance.tenant_overrides_set' && e.tenant === tenant && e.payload.SetMaxTokens === true,
        'second tenant_overrides_set',
      );
      const events = h.events.filter((e) => e.type === 'governance.tenant_overrides_set' && e.tenant === tenant);
      expect(events).toHaveLength(2);
      expect(keysOf(events[0]!.payload)).toEqual(
        [
          'Actor',
          'Tenant',
          'Model',
          'SetModel',
          'SetExtraInstructions',
          'SetTemperature',
          'SetMaxTokens',
          'SetReasoningEffort',
          'OccurredAt',
        ].sort(),
      );
      expect(events.map((e) => ({ ...e.payload, OccurredAt: undefined }))).toEqual([
        {
          Actor: { tenant, user: 'admin', session: 's-1', run: '' },
          Tenant: tenant,
          Model: 'gpt-x',
          SetModel: true,
          SetExtraInstructions: true,
          SetTemperature: true,
          SetMaxTokens: false,
          SetReasoningEffort: false,
          OccurredAt: undefined,
        },
        {
          Actor: { tenant, user: 'admin', session: 's-1', run: '' },
          Tenant: tenant,
          Model: 'gpt-x',
          SetModel: false,
          SetExtraInstructions: false,
          SetTemperature: true,
          SetMaxTokens: true,
          SetReasoningEffort: true,
          OccurredAt: undefined,
        },
      ]);
      const read = await h.call('governance.get_tenant_overrides', { identity: {} }, admin);
      expect(read).toMatchObject({ overrides: second.overrides, updated_at: second.updated_at });
    });

    it("lets an admin set another tenant's overrides, which the engine reads as effective", async () => {
      const target = uniqueTenant();
      const admin = identityOf(uniqueTenant(), ['admin'], 'admin');
      await h.call(
        'governance.set_tenant_overrides',
        { identity: {}, tenant: target, overrides: { model: 'm-t' } },
        admin,
      );
      const event = await h.waitForEvent(
        (e) => e.type === 'governance.tenant_overrides_set' && e.payload.Tenant === target,
        'tenant_overrides_set',
      );
      expect(event.tenant).toBe(admin.tenant);
      const effective = await h.call('_governance.effective_overrides', { tenant: target }, identityOf(target));
      expect(effective).toMatchObject({ tenant: target, overrides: { model: 'm-t' } });
      expect(await h.call('governance.get_tenant_overrides', { identity: {}, tenant: target }, admin)).toMatchObject({
        overrides: { model: 'm-t' },
      });
    });

    it('answers empty effective overrides for a tenant without any', async () => {
      const tenant = uniqueTenant();
      expect(await h.call('_governance.effective_overrides', { tenant }, identityOf(tenant))).toEqual({
        tenant,
        overrides: {},
      });
    });

    it.each([
      ['get', 'governance.get_tenant_overrides', {}, []],
      ['set', 'governance.set_tenant_overrides', { overrides: { model: 'x' } }, []],
      ['get', 'governance.get_tenant_overrides', {}, ['console:fleet']],
      ['set', 'governance.set_tenant_overrides', { overrides: { model: 'x' } }, ['console:fleet']],
    ])('refuses %s (%s) without admin: scopes %j', async (_verb, method, extra, scopes) => {
      const outcome = await h.outcome(method, { identity: {}, ...extra }, identityOf(uniqueTenant(), scopes));
      expect(outcome).toMatchObject({ ok: false, code: 'identity_scope_required' });
    });

    it.each([
      ['a temperature above 2', { temperature: 3 }],
      ['an unknown member', { top_k: 3 }],
      ['an unknown reasoning effort', { reasoning_effort: 'extreme' }],
    ])('refuses overrides with %s', async (_label, overrides) => {
      const outcome = await h.outcome(
        'governance.set_tenant_overrides',
        { identity: {}, overrides },
        identityOf(uniqueTenant(), ['admin']),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    });

    it("refuses the effective overrides of another tenant than the caller's", async () => {
      const outcome = await h.outcome(
        '_governance.effective_overrides',
        { tenant: uniqueTenant() },
        identityOf(uniqueTenant()),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'scope_mismatch' });
    });
  });

  describe('provider keys', () => {
    const secret = `sk-test-${randomUUID()}${randomUUID()}`.replaceAll('-', '');
    const replacement = `sk-next-${randomUUID()}${randomUUID()}`.replaceAll('-', '');
    const tenant = uniqueTenant();
    const admin = identityOf(tenant, ['admin'], 'admin');
    const engine = identityOf(tenant);
    let installed: GovernanceRotateKeyResponse;
    let rotated: GovernanceRotateKeyResponse;
    const engineReads: { key: string; fingerprint: string }[] = [];

    const readKey = async () =>
      (await h.service.rpc.call('governance', '_governance.provider_key', engine, {
        tenant,
        provider: 'openai-main',
      })) as { key: string; fingerprint: string };

    beforeAll(async () => {
      const rotate = async (key: string) =>
        GovernanceRotateKeyResponse.parse(
          await h.call('governance.rotate_key', { identity: {}, provider: 'openai-main', key }, admin),
        );
      installed = await rotate(secret);
      engineReads.push(await readKey());
      rotated = await rotate(replacement);
      engineReads.push(await readKey());
      await h.call('governance.posture', { identity: {} }, engine);
      await h.call('llm.posture', { identity: {} }, engine);
    });

    it('answers and publishes only the fingerprint of a new key', async () => {
      expect(installed.provider).toBe('openai-main');
      expect(installed.fingerprint).toMatch(/^sha256:[0-9a-f]{16}$/);
      expect(installed).not.toHaveProperty('previous_fingerprint');
      const event = await h.waitForEvent(
        (e) =>
          e.type === 'governance.key_rotated' && e.tenant === tenant && e.payload.Fingerprint === installed.fingerprint,
        'governance.key_rotated',
      );
      expect(keysOf(event.payload)).toEqual(['Actor', 'Fingerprint', 'OccurredAt', 'Provider']);
      expect(event.payload).toEqual({
        Actor: { tenant, user: 'admin', session: 's-1', run: '' },
        Provider: 'openai-main',
        Fingerprint: installed.fingerprint,
        OccurredAt: installed.rotated_at,
      });
    });

    it('names the replaced fingerprint on a rotation', () => {
      expect(rotated).toMatchObject({ previous_fingerprint: installed.fingerprint });
      expect(rotated.fingerprint).not.toBe(installed.fingerprint);
    });

    it('hands the decrypted key to the engine, and the new one after a rotation', () => {
      expect(engineReads).toEqual([
        expect.objectContaining({ key: secret, fingerprint: installed.fingerprint }),
        expect.objectContaining({ key: replacement, fingerprint: rotated.fingerprint }),
      ]);
    });

    it('never shows the key in a response, an event, a log line or a stored file', async () => {
      const stored = await Promise.all((await filesUnder(h.dataDir)).map((f) => readFile(f, 'utf8')));
      expect(stored.some((s) => s.includes(rotated.fingerprint))).toBe(true);
      for (const value of [secret, replacement]) {
        expect(h.responses.filter((r) => r.includes(value))).toEqual([]);
        expect(h.rawEvents.filter((r) => r.includes(value))).toEqual([]);
        expect(h.logs.filter((l) => l.includes(value))).toEqual([]);
        expect(stored.filter((s) => s.includes(value))).toEqual([]);
      }
      expect(h.logs.some((l) => l.includes('provider key rotated'))).toBe(true);
    });

    it('answers not_found for a provider without a key', async () => {
      const outcome = await h.outcome('_governance.provider_key', { tenant, provider: 'nobody' }, identityOf(tenant));
      expect(outcome).toMatchObject({ ok: false, code: 'not_found' });
    });

    it("refuses another tenant's key", async () => {
      const outcome = await h.outcome(
        '_governance.provider_key',
        { tenant, provider: 'openai-main' },
        identityOf(uniqueTenant(), ['admin']),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'scope_mismatch' });
    });

    it.each([
      ['a scopeless token', []],
      ['console:fleet', ['console:fleet']],
    ])('refuses rotate_key to %s', async (_label, scopes) => {
      const outcome = await h.outcome(
        'governance.rotate_key',
        { identity: {}, provider: 'p', key: 'sk-never-stored-000000000000' },
        identityOf(uniqueTenant(), scopes),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'identity_scope_required' });
    });

    it.each([
      ['an empty key', { provider: 'p', key: '' }],
      ['no provider', { key: 'abc' }],
      ['an unknown member', { provider: 'p', key: 'abc', kind: 'openai' }],
    ])('refuses rotate_key with %s', async (_label, body) => {
      const outcome = await h.outcome(
        'governance.rotate_key',
        { identity: {}, ...body },
        identityOf(uniqueTenant(), ['admin']),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
      expect(outcome.ok ? '' : outcome.message).not.toContain('abc');
    });

    it('refuses a body tenant other than the caller on rotate_key', async () => {
      const outcome = await h.outcome(
        'governance.rotate_key',
        { identity: { tenant: uniqueTenant() }, provider: 'p', key: 'k' },
        identityOf(uniqueTenant(), ['admin']),
      );
      expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
    });
  });
});

describe('the key-encryption key', () => {
  const logger = createLogger({ name: 'governance', level: 'silent' });
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-governance-kek-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('is generated once under DATA_DIR in dev, readable only by its owner, and reused', async () => {
    const first = await loadKeyEncryptionKey({ DATA_DIR: dir }, logger);
    expect(first.source).toBe('generated');
    const info = await stat(join(dir, DEV_KEK_FILE));
    expect(info.mode & 0o777).toBe(0o600);
    const second = await loadKeyEncryptionKey({ DATA_DIR: dir }, logger);
    expect(second).toMatchObject({ source: 'file', id: first.id });
    expect(second.key.equals(first.key)).toBe(true);
  });

  it('prefers the configured key', async () => {
    const configured = randomBytes(32);
    const loaded = await loadKeyEncryptionKey(
      { DATA_DIR: dir, GOVERNANCE_KEY_ENCRYPTION_KEY: configured.toString('hex') },
      logger,
    );
    expect(loaded.source).toBe('config');
    expect(loaded.key.equals(configured)).toBe(true);
  });

  it('refuses a corrupt key file', async () => {
    const broken = await mkdtemp(join(tmpdir(), 'ars-governance-kek-bad-'));
    try {
      await loadKeyEncryptionKey({ DATA_DIR: broken }, logger);
      await writeFile(join(broken, DEV_KEK_FILE), 'short');
      await expect(loadKeyEncryptionKey({ DATA_DIR: broken }, logger)).rejects.toThrow(/does not hold a 32-byte key/);
    } finally {
      await rm(broken, { recursive: true, force: true });
    }
  });
});
