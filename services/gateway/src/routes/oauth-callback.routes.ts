import { callInternal } from '@ars/bus';
import {
  OAUTH_COMPLETE,
  OAuthCompleteRequest,
  ServiceError,
  describeFirstIssue,
  serviceCallerIdentity,
} from '@ars/contracts';
import type { OAuthCompleteReply } from '@ars/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../http/errors.ts';
import { OAUTH_CALLBACK_PATH } from '../http/loggable-url.ts';
import type { RpcCaller } from '../ports.ts';

/**
 * `GET /v1/oauth/callback?state=…&code=…` (or `error=…`): where an
 * authorization server sends the user's browser back after an MCP server's
 * OAuth authorization. No bearer token: the single-use, unguessable `state`
 * is the capability. The gateway relays the query to agent-registry's
 * `_oauth.complete`; on the bus it travels under the fixed service identity
 * `serviceCallerIdentity('gateway')` (tenant `_system`, user `gateway`, no
 * scope), which the endpoint's `service` gate ignores. The answer is a small
 * HTML page, or the completion as JSON when the Accept header prefers JSON;
 * a refusal (unknown, used or expired state: 404; a code the server refused:
 * 409; the authorization server down: 503) is the error envelope.
 */

/** What the callback route needs. */
export interface OAuthCallbackRoutesOptions {
  readonly rpc: RpcCaller;
  /** Bounds `_oauth.complete` (it exchanges the code with the authorization server), in ms. */
  readonly timeoutMs: number;
}

const PAGES: Readonly<Record<OAuthCompleteReply['outcome'], { title: string; text: string }>> = {
  completed: { title: 'Authorization complete', text: 'Authorization complete. You can close this window.' },
  denied: { title: 'Authorization denied', text: 'Authorization was denied. You can close this window.' },
};

function page(outcome: OAuthCompleteReply['outcome']): string {
  const { title, text } = PAGES[outcome];
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><p>${text}</p></body></html>\n`;
}

/** True when the Accept header ranks JSON above HTML (absent or `*\/*`: HTML, a browser's default). */
export function prefersJson(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  let json = 0;
  let html = 0;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2)) || 0;
    if (type === 'application/json' || type.endsWith('+json')) json = Math.max(json, weight);
    if (type === 'text/html') html = Math.max(html, weight);
  }
  return json > html;
}

/**
 * The callback members `_oauth.complete` takes (`iss` of RFC 9207 among
 * them, which agent-registry checks against the flow's authorization
 * server). An authorization server may add others to its redirect (OpenID
 * `session_state`, Google's `scope` and `authuser`): they are not relayed,
 * and not refused.
 */
const RELAYED: ReadonlySet<string> = new Set(Object.keys(OAuthCompleteRequest.shape));

/** The query as `_oauth.complete`'s body: 400 `invalid_request` for anything else. */
function completionOf(query: unknown): OAuthCompleteRequest {
  const members = Object.entries((query ?? {}) as Record<string, unknown>).filter(
    ([name, value]) => RELAYED.has(name) && value !== '',
  );
  const parsed = OAuthCompleteRequest.safeParse(Object.fromEntries(members));
  if (!parsed.success) {
    throw new ServiceError('invalid_request', `invalid OAuth callback: ${describeFirstIssue(parsed.error)}`);
  }
  if (parsed.data.code === undefined && parsed.data.error === undefined) {
    throw new ServiceError('invalid_request', 'invalid OAuth callback: neither code nor error');
  }
  return parsed.data;
}

/** The OAuth callback route (unauthenticated). */
export async function oauthCallbackRoutes(app: FastifyInstance, options: OAuthCallbackRoutesOptions): Promise<void> {
  app.get(OAUTH_CALLBACK_PATH, async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('cache-control', 'no-store');
    try {
      const body = completionOf(request.query);
      const completed = await callInternal(options.rpc, OAUTH_COMPLETE, serviceCallerIdentity('gateway'), body, {
        timeoutMs: options.timeoutMs,
      });
      if (prefersJson(request.headers.accept)) return reply.type('application/json; charset=utf-8').send(completed);
      return reply.type('text/html; charset=utf-8').send(page(completed.outcome));
    } catch (error) {
      return sendError(request, reply, error);
    }
  });
}
