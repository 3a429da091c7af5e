import type { Bus, EventPublisher, RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { TaskRepository } from '../store/task.repository.ts';

/** The settings the API handlers read (a slice of `RunExecutorConfig`). */
export interface ApiSettings {
  /** The configured default agent id: always accepted, never resolved remotely. */
  readonly defaultAgentId: string;
  /** How long a control waits for the live inbox's reply, in ms. */
  readonly controlReplyTimeoutMs: number;
  /** How long start waits for the session, agent-registry and artifact services, in ms. */
  readonly dependencyTimeoutMs: number;
}

/** The API settings from the service's configuration. */
export function apiSettingsOf(config: {
  readonly DEFAULT_AGENT_ID: string;
  readonly CONTROL_REPLY_TIMEOUT_MS: number;
  readonly DEPENDENCY_TIMEOUT_MS: number;
}): ApiSettings {
  return {
    defaultAgentId: config.DEFAULT_AGENT_ID,
    controlReplyTimeoutMs: config.CONTROL_REPLY_TIMEOUT_MS,
    dependencyTimeoutMs: config.DEPENDENCY_TIMEOUT_MS,
  };
}

/** What every API-side handler of the run-executor may use. */
export interface ApiDeps {
  readonly tasks: TaskRepository;
  readonly bus: Bus;
  readonly rpc: RpcClient;
  readonly publisher: EventPublisher;
  readonly logger: Logger;
  readonly settings: ApiSettings;
}
