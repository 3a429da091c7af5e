/**
 * @ars/testkit: what integration and e2e tests share. A nats-server per
 * suite on a free port, a whole system per e2e suite as separate processes,
 * unique identities, dev tokens, and waiting for events without sleeps.
 */
export { startTestNats, startTestNatsCluster } from './nats.ts';
export type { TestNats, TestNatsCluster } from './nats.ts';
export { startTestSystem, SERVICE_NODE_FLAGS } from './system.ts';
/** A TCP port free on 127.0.0.1 right now (for a server the test or benchmark starts itself). */
export { findFreePort } from '@ars/bus';
export type { TestSystem, TestSystemOptions } from './system.ts';
export { mintToken, uniqueIdentity } from './identity.ts';
export type { MintTokenRequest, TestIdentity } from './identity.ts';
export { collectEvents, waitFor } from './wait.ts';
export type { CollectOptions, WaitForOptions } from './wait.ts';
export { minimalBody } from './minimal-body.ts';
export { recordImports } from './import-recorder.ts';
export type { ImportRecorder } from './import-recorder.ts';
export { MCP_EVERYTHING_ENTRY, startMcpEverythingHttp } from './mcp-everything.ts';
export type { McpHttpServer } from './mcp-everything.ts';
export { startCredentialBroker } from './credential-broker.ts';
export type {
  BrokerFault,
  BrokerRequestRecord,
  StartCredentialBrokerOptions,
  TestCredentialBroker,
} from './credential-broker.ts';
export { startOAuthMcpServer } from './oauth-mcp.ts';
export type { OAuthMcpServer, OAuthMcpServerOptions, TokenRequestSeen } from './oauth-mcp.ts';
export {
  FAKE_OPENAI_BEHAVIOURS,
  startFakeOpenAi,
  type FakeOpenAi,
  type FakeOpenAiBehaviour,
  type FakeOpenAiRequest,
  type FakeOpenAiUpload,
} from './fake-openai.ts';
