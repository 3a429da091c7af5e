import { PROTOCOL_VERSION, ServiceError } from '@ars/contracts';
import type { MethodDef } from '@ars/contracts';
import { SpanStatusCode } from '@ars/telemetry';
import type { Context, Span } from '@ars/telemetry';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { StreamedJson } from '../artifacts/artifact-download.ts';
import type { Authenticated } from '../http/authenticate.ts';

/** Per-request state from the onRequest stage to the handler. */
export interface Routed {
  readonly span: Span;
  readonly context: Context;
  method?: MethodDef;
  auth?: Authenticated;
  ended?: boolean;
}

/** Ends the request span once, whichever of response or abort comes first. */
export function endSpan(state: Routed | undefined, status?: number): void {
  if (state === undefined || state.ended === true) return;
  state.ended = true;
  if (status !== undefined) {
    state.span.setAttribute('http.response.status_code', status);
    if (status >= 500) state.span.setStatus({ code: SpanStatusCode.ERROR });
  }
  state.span.end();
}

/** Control-surface responses carry `protocol_version`. */
export function withProtocolVersion(method: MethodDef, result: unknown): unknown {
  if (method.surface !== 'control' || result === null || typeof result !== 'object' || Array.isArray(result)) {
    return result;
  }
  return { ...result, protocol_version: PROTOCOL_VERSION };
}

/** Sends a method's answer: JSON text, or a streamed JSON body. */
export function sendResult(reply: FastifyReply, result: unknown): FastifyReply {
  reply.code(200).type('application/json; charset=utf-8');
  if (result instanceof StreamedJson) return reply.header('content-length', result.length).send(result.body);
  return reply.send(JSON.stringify(result));
}

/** The state the onRequest hook left, or `internal` when the request was not routed. */
export function routedState(routed: WeakMap<FastifyRequest, Routed>, request: FastifyRequest) {
  const state = routed.get(request);
  const method = state?.method;
  const auth = state?.auth;
  if (state === undefined || method === undefined || auth === undefined) {
    throw new ServiceError('internal', 'request reached the handler without routing');
  }
  return { state, method, auth };
}
