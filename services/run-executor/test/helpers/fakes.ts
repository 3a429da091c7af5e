import { ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { serveService } from '@ars/bus';
import type { Bus, RpcRequest, ServedService } from '@ars/bus';
import type { Logger } from '@ars/telemetry';

function key(...parts: string[]): string {
  return JSON.stringify(parts);
}

/** A stand-in session service: `_session.admit` refuses erased sessions and records every call. */
export interface FakeSession {
  readonly admitted: { identity: VerifiedIdentity; body: unknown }[];
  erase(tenant: string, user: string, session: string): void;
  /** The `reuse_ms` its admissions answer (0, the default: none may be reused). */
  reuseMs: number;
  /** While set, admissions are recorded at once but answered only when it settles. */
  gate: Promise<void> | undefined;
}

/** A stand-in agent-registry: `_agent.resolve` knows the agents registered per tenant. */
export interface FakeAgents {
  register(tenant: string, agentId: string, revisionId: string): void;
  readonly calls: unknown[];
}

/** A stand-in artifact service: `_artifact.resolve` knows artifacts per (tenant, user). */
export interface FakeArtifacts {
  add(tenant: string, user: string, artifactId: string, mimeType: string, sizeBytes: number): void;
}

/** The three fakes, served on the test's bus under the real service names. */
export interface Fakes {
  readonly session: FakeSession;
  readonly agents: FakeAgents;
  readonly artifacts: FakeArtifacts;
  stop(): Promise<void>;
}

/** Serves fakes of `_session.admit`, `_agent.resolve` and `_artifact.resolve`. */
export async function serveFakes(bus: Bus, logger: Logger): Promise<Fakes> {
  const erased = new Set<string>();
  const admitted: FakeSession['admitted'] = [];
  const agents = new Map<string, string>();
  const agentCalls: unknown[] = [];
  const artifacts = new Map<string, { mime_type: string; size_bytes: number }>();

  const session: FakeSession = {
    admitted,
    erase: (t, u, s) => erased.add(key(t, u, s)),
    reuseMs: 0,
    gate: undefined,
  };
  const admit = async ({ identity, body }: RpcRequest) => {
    admitted.push({ identity, body });
    await session.gate;
    const b = body as { tenant: string; user: string; session: string };
    if (erased.has(key(b.tenant, b.user, b.session))) throw new ServiceError('session_erased', 'session was erased');
    return { state: 'open', reuse_ms: session.reuseMs };
  };
  const resolveAgent = async ({ body }: RpcRequest) => {
    agentCalls.push(body);
    const b = body as { tenant: string; agent_id: string };
    const revision = agents.get(key(b.tenant, b.agent_id));
    if (revision === undefined)
      throw new ServiceError('invalid_request', `agent_id ${b.agent_id} names no agent configuration`);
    return { agent_id: b.agent_id, revision_id: revision, config: {} };
  };
  const resolveArtifacts = async ({ body }: RpcRequest) => {
    const b = body as { tenant: string; user: string; artifact_ids: string[] };
    return {
      artifacts: b.artifact_ids.map((id) => {
        const found = artifacts.get(key(b.tenant, b.user, id));
        if (found === undefined) throw new ServiceError('invalid_request', `artifact ${id} not found`);
        return { artifact_id: id, ...found, namespace: 'default', source: 'upload' };
      }),
    };
  };

  const served: ServedService[] = [];
  const serve = async (service: string, name: string, handler: (r: RpcRequest) => Promise<unknown>) => {
    served.push(
      await serveService(bus, {
        service,
        version: '0.0.1',
        instanceId: `fake-${service}`,
        handlers: { [name]: handler },
        logger,
      }),
    );
  };
  await serve('session', '_session.admit', admit);
  await serve('agent-registry', '_agent.resolve', resolveAgent);
  await serve('artifact', '_artifact.resolve', resolveArtifacts);

  return {
    session,
    agents: { register: (t, a, r) => agents.set(key(t, a), r), calls: agentCalls },
    artifacts: { add: (t, u, id, mime, size) => artifacts.set(key(t, u, id), { mime_type: mime, size_bytes: size }) },
    stop: async () => {
      await Promise.all(served.map((s) => s.stop()));
    },
  };
}
