import { credentialFingerprint } from '@ars/service-kit';
import type { BrokerFetch, CredentialBrokerClient, CredentialRequest } from '@ars/service-kit';
import type { ProviderSettings } from '../providers/provider.ts';
import type { Owner } from '../store/run-state.repository.ts';
import { occurredAt } from './run-events.ts';

/**
 * LLM API keys from an inference broker: an agent whose `llm_provider` names
 * an `inference_broker` (URL) gets its openai provider's key from that
 * broker at each call (purpose `inference`, provider = the provider kind,
 * subject = the run's user), instead of governance's `_governance.provider_key`.
 * The broker client caches it until shortly before it expires (see
 * `@ars/service-kit` credential-broker). Each request sent to the broker
 * (not a cache hit) is published on the run's stream as
 * `llm.provider_credential_fetched`: the executor's principal, the broker's
 * host, the provider, the key's fingerprint (never the key), the phase and
 * the outcome (`ok`, else the failure reason).
 */

/** Whose call asks for a key, and where its events go. */
export interface KeyAsker {
  readonly owner: Owner;
  readonly taskId: string;
  readonly agentId: string;
  /** Publishes one event on the run's stream. */
  emit(type: string, payload: Record<string, unknown>): void;
}

export interface InferenceCredentials {
  /** The key of `settings` (which names an `inferenceBroker`) for the asker's user; throws `BrokerError`. */
  key(asker: KeyAsker, settings: ProviderSettings): Promise<string>;
  /** The provider refused the key: the next call fetches another (`refresh`). */
  invalidate(asker: KeyAsker, settings: ProviderSettings): void;
}

/** Options of {@link createInferenceCredentials}. */
export interface InferenceCredentialsOptions {
  readonly client: CredentialBrokerClient;
  /** The executor's principal: `run-executor/<instance id>` (event RuntimePrincipal). */
  readonly principal: string;
}

function requestOf(asker: KeyAsker, settings: ProviderSettings): CredentialRequest {
  return {
    url: settings.inferenceBroker ?? '',
    purpose: 'inference',
    provider: settings.kind,
    subject: { kind: 'user', tenant: asker.owner.tenant, user: asker.owner.user },
    actor: { agent_id: asker.agentId, run: asker.taskId },
  };
}

export function createInferenceCredentials(options: InferenceCredentialsOptions): InferenceCredentials {
  const { client, principal } = options;
  return {
    async key(asker, settings) {
      const announce = (fetch: BrokerFetch): void =>
        asker.emit('llm.provider_credential_fetched', {
          RuntimePrincipal: principal,
          Broker: fetch.broker,
          Provider: settings.kind,
          KeyFingerprint: fetch.credential === undefined ? '' : credentialFingerprint(fetch.credential.credential),
          Phase: fetch.phase,
          Outcome: fetch.outcome,
          OccurredAt: occurredAt(),
        });
      return (await client.get(requestOf(asker, settings), announce)).credential;
    },
    invalidate: (asker, settings) => client.invalidate(requestOf(asker, settings)),
  };
}
