import type * as NodeHttp from 'node:http';
import type * as NodeHttps from 'node:https';
import { fetchTransport } from './transport-fetch.ts';
import type { HttpAnswer, PostTransport } from './transport-fetch.ts';

/**
 * The Node.js transport: `node:http`/`node:https` with one keep-alive agent
 * per protocol (measured through the gateway: about 0.15 ms less per call
 * than the global `fetch` at p50, 0.5 ms less for a start seen through to its
 * first event, and less CPU per call). Loaded only by the Node.js entry
 * (`index.ts`); the browser entry never imports this module.
 */
export { fetchTransport };
export type { HttpAnswer, PostTransport };

interface NodeModules {
  readonly http: typeof NodeHttp;
  readonly https: typeof NodeHttps;
  readonly agents: { readonly http: NodeHttp.Agent; readonly https: NodeHttps.Agent };
}

let nodeModules: Promise<NodeModules> | undefined;

function loadNode(): Promise<NodeModules> {
  nodeModules ??= Promise.all([import('node:http'), import('node:https')]).then(([http, https]) => ({
    http,
    https,
    agents: {
      http: new http.Agent({ keepAlive: true }),
      https: new https.Agent({ keepAlive: true }),
    },
  }));
  return nodeModules;
}

export const nodeTransport: PostTransport = async (url, body, headers, signal) => {
  const { http, https, agents } = await loadNode();
  signal?.throwIfAborted();
  const secure = url.startsWith('https:');
  const payload = Buffer.from(body, 'utf8');
  return new Promise<HttpAnswer>((resolve, reject) => {
    const request = (secure ? https : http).request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(payload.length) },
      agent: secure ? agents.https : agents.http,
      ...(signal ? { signal } : {}),
    });
    request.on('error', reject);
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('error', reject);
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, statusText: response.statusMessage ?? '', url, text }),
      );
    });
    request.end(payload);
  });
};

/** The transport of this runtime. */
export const defaultTransport: PostTransport =
  typeof process !== 'undefined' && typeof process.versions?.node === 'string' ? nodeTransport : fetchTransport;
