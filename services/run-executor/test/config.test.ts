import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@ars/service-kit';
import { RunExecutorConfig } from '../src/config.ts';

const NATS_URL = 'nats://127.0.0.1:4222';

describe('RunExecutorConfig', () => {
  it('gives an MCP tool call 60 s at the tool host unless told, and refuses less than 100 ms', () => {
    expect(loadConfig(RunExecutorConfig, { NATS_URL }).MCP_CALL_TIMEOUT_MS).toBe(60_000);
    expect(loadConfig(RunExecutorConfig, { NATS_URL, MCP_CALL_TIMEOUT_MS: '5000' }).MCP_CALL_TIMEOUT_MS).toBe(5_000);
    expect(() => loadConfig(RunExecutorConfig, { NATS_URL, MCP_CALL_TIMEOUT_MS: '50' })).toThrowError(ConfigError);
  });

  it('runs 32 at once and binds agent "default" unless told', () => {
    expect(loadConfig(RunExecutorConfig, { NATS_URL })).toMatchObject({
      EXECUTOR_CONCURRENCY: 32,
      DEFAULT_AGENT_ID: 'default',
    });
  });

  it('waits 2 s for a live inbox and 5 s for the services start asks, unless told', () => {
    expect(loadConfig(RunExecutorConfig, { NATS_URL })).toMatchObject({
      CONTROL_REPLY_TIMEOUT_MS: 2000,
      DEPENDENCY_TIMEOUT_MS: 5000,
    });
    expect(loadConfig(RunExecutorConfig, { NATS_URL, CONTROL_REPLY_TIMEOUT_MS: '250' }).CONTROL_REPLY_TIMEOUT_MS).toBe(
      250,
    );
  });

  it.each(['0', '10', 'soon'])('names CONTROL_REPLY_TIMEOUT_MS=%s as bad', (value) => {
    expect(() => loadConfig(RunExecutorConfig, { NATS_URL, CONTROL_REPLY_TIMEOUT_MS: value })).toThrowError(
      /CONTROL_REPLY_TIMEOUT_MS/,
    );
  });

  it('gives an unsafe call in flight 20 s more on a drain, unless told', () => {
    expect(loadConfig(RunExecutorConfig, { NATS_URL }).EXECUTOR_DRAIN_UNSAFE_CALL_MS).toBe(20_000);
    expect(
      loadConfig(RunExecutorConfig, { NATS_URL, EXECUTOR_DRAIN_UNSAFE_CALL_MS: '0' }).EXECUTOR_DRAIN_UNSAFE_CALL_MS,
    ).toBe(0);
    expect(() => loadConfig(RunExecutorConfig, { NATS_URL, EXECUTOR_DRAIN_UNSAFE_CALL_MS: '-1' })).toThrowError(
      /EXECUTOR_DRAIN_UNSAFE_CALL_MS/,
    );
  });

  it('reads EXECUTOR_CONCURRENCY as an integer', () => {
    expect(loadConfig(RunExecutorConfig, { NATS_URL, EXECUTOR_CONCURRENCY: '3' }).EXECUTOR_CONCURRENCY).toBe(3);
  });

  it.each(['0', '-1', '2.5', 'many'])('names EXECUTOR_CONCURRENCY=%s as bad', (value) => {
    expect(() => loadConfig(RunExecutorConfig, { NATS_URL, EXECUTOR_CONCURRENCY: value })).toThrowError(ConfigError);
    expect(() => loadConfig(RunExecutorConfig, { NATS_URL, EXECUTOR_CONCURRENCY: value })).toThrowError(
      /EXECUTOR_CONCURRENCY/,
    );
  });

  it('keeps a resolved configuration a minute at most, asks for 4096 max tokens and prices nothing, unless told', () => {
    expect(loadConfig(RunExecutorConfig, { NATS_URL })).toMatchObject({
      AGENT_CONFIG_CACHE_MS: 60_000,
      ENGINE_RPC_TIMEOUT_MS: 2000,
      LLM_DEFAULT_MAX_TOKENS: 4096,
      LLM_PRICES: {},
      INLINE_ARTIFACT_MAX_BYTES: 16384,
    });
    const prices = '{"gpt-4o-mini":{"input":0.15,"output":0.6}}';
    expect(loadConfig(RunExecutorConfig, { NATS_URL, LLM_PRICES: prices }).LLM_PRICES).toEqual({
      'gpt-4o-mini': { input: 0.15, output: 0.6 },
    });
  });

  it.each(['not json', '{"m":{"input":-1,"output":0}}', '{"m":1}'])('names LLM_PRICES=%s as bad', (value) => {
    expect(() => loadConfig(RunExecutorConfig, { NATS_URL, LLM_PRICES: value })).toThrowError(/LLM_PRICES/);
  });
});
