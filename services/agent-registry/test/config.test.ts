import { describe, expect, it } from 'vitest';
import { loadConfig } from '@ars/service-kit';
import { AgentRegistryConfig } from '../src/config.ts';

const NATS_URL = 'nats://127.0.0.1:4222';

describe('AgentRegistryConfig', () => {
  it('knows the default agent as "default" unless told', () => {
    expect(loadConfig(AgentRegistryConfig, { NATS_URL }).DEFAULT_AGENT_ID).toBe('default');
    expect(loadConfig(AgentRegistryConfig, { NATS_URL, DEFAULT_AGENT_ID: 'house' }).DEFAULT_AGENT_ID).toBe('house');
  });

  it('names a DEFAULT_AGENT_ID longer than an agent id as bad', () => {
    expect(() => loadConfig(AgentRegistryConfig, { NATS_URL, DEFAULT_AGENT_ID: 'a'.repeat(129) })).toThrowError(
      /DEFAULT_AGENT_ID/,
    );
  });
});
