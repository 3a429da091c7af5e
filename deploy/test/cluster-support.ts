import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { createTokenIssuer } from '@ars/auth';
import type { TokenIssuer } from '@ars/auth';

/**
 * Stand-ins for what a production cluster has around the chart: an OIDC
 * identity provider's JWKS, and the operator's Secret values.
 */

function pem(): string {
  const { privateKey } = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return privateKey;
}

/** An identity provider: mints tokens and serves its JWKS over HTTP on loopback. */
export interface TestIdentityProvider {
  readonly jwksUrl: string;
  readonly issuer: TokenIssuer;
  stop(): Promise<void>;
}

export async function startIdentityProvider(issuer: string, audience: string): Promise<TestIdentityProvider> {
  const tokens = await createTokenIssuer({ issuer, audience, signingKey: pem() });
  const server: Server = createServer((request, response) => {
    if (request.url === '/jwks') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(tokens.publicJwks));
    } else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    jwksUrl: `http://127.0.0.1:${port}/jwks`,
    issuer: tokens,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Test values of the chart's Secret keys (no MongoDB runs here: `mongo-url` is absent). */
export function testSecretValues(): Record<string, string> {
  return {
    'governance-key-encryption-key': randomBytes(32).toString('base64'),
    'llm-api-key': 'test-llm-api-key',
    'rotation-signing-key': pem(),
  };
}
