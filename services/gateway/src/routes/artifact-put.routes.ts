import { ServiceError, getMethod, isServiceError } from '@ars/contracts';
import { context } from '@ars/telemetry';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { abortUpload, readPutBody } from '../artifacts/artifact-upload.ts';
import type { ArtifactUploadContext } from '../artifacts/artifact-upload.ts';
import { sendError } from '../http/errors.ts';
import type { EventSink, RpcCaller } from '../ports.ts';
import { authorizeMethod } from '../http/authorize.ts';
import { forwardedBody, gateBody, gateIdentity } from './method-gate.ts';
import { routedState, sendResult, withProtocolVersion } from './route-state.ts';
import type { Routed } from './route-state.ts';

/** What the artifacts.put route needs. */
export interface ArtifactPutRoutesOptions {
  /** The state of the parent's onRequest hook (routing, authentication, span). */
  readonly routed: WeakMap<FastifyRequest, Routed>;
  readonly events: EventSink;
  readonly rpc: RpcCaller;
  readonly artifacts: ArtifactUploadContext;
}

const ARTIFACTS_PUT = 'artifacts.put';
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function contentLength(request: FastifyRequest): number | undefined {
  const header = request.headers['content-length'];
  const value = header === undefined ? Number.NaN : Number(header);
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * `artifacts.put` on its own route: the one body allowed past the gateway's
 * small body limit (up to `ARS_ARTIFACT_BODY_LIMIT_BYTES`), read as it
 * arrives rather than buffered (see `readPutBody`), then gated and
 * dispatched like every other method. An upload the call then does not
 * finalise is aborted when the refusal is definite (a 4xx).
 */
export async function artifactPutRoutes(app: FastifyInstance, options: ArtifactPutRoutesOptions): Promise<void> {
  const method = getMethod(ARTIFACTS_PUT);
  if (method === undefined) throw new Error(`${ARTIFACTS_PUT} is not in the method registry`);

  // The body stays a stream: readPutBody reads it, after authentication.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const { auth } = routedState(options.routed, request);
    const verified = auth.identity;
    // Claims first: a refused caller learns nothing of the body's rules (its type, its size).
    authorizeMethod(method, verified);
    const type = request.headers['content-type'];
    if (type === undefined || !JSON_MEDIA_TYPE.test(type)) {
      throw new ServiceError('invalid_request', 'the request body must be sent as Content-Type: application/json');
    }
    if ((contentLength(request) ?? 0) > options.artifacts.bodyLimitBytes) {
      throw new ServiceError('payload_too_large', 'the request body is larger than the gateway accepts');
    }
    const { body, uploadId } = await readPutBody(options.artifacts, {
      // Not destroyed when the read stops early (a refusal): what is left is drained or the connection closed.
      raw: request.raw.iterator({ destroyOnReturn: false }),
      verified,
      preflight: (partial) => gateIdentity(method, verified, partial),
    });
    try {
      const identity = await gateBody(options.events, request.log, method, verified, body);
      const result = await options.rpc.call('artifact', ARTIFACTS_PUT, verified, forwardedBody(method, body, identity));
      return sendResult(reply, withProtocolVersion(method, result ?? {}));
    } catch (error) {
      // A timeout or outage may hide a put that went through: only a definite refusal drops the upload.
      const refused = isServiceError(error) && error.status >= 400 && error.status < 500;
      if (uploadId !== undefined && refused) await abortUpload(options.artifacts, verified, uploadId);
      throw error;
    }
  };

  for (const route of method.routes) {
    app.post(route, async (request, reply) => {
      const { state } = routedState(options.routed, request);
      return context.with(state.context, async () => {
        try {
          return await handle(request, reply);
        } catch (error) {
          return sendError(request, reply, error);
        }
      });
    });
  }
}
