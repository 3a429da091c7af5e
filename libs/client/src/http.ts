import { createArsError, errorFromAnswer, networkError } from './errors.ts';
import type { HttpAnswer, PostTransport } from './transport-fetch.ts';

/** Strips trailing slashes so that `${base}/v1/...` never doubles one. */
export function normalizeBaseUrl(baseUrl: string): string {
  if (typeof baseUrl !== 'string' || baseUrl === '') throw new TypeError('baseUrl is required');
  return baseUrl.replace(/\/+$/, '');
}

/** The identity headers of the two-part model; omitted when empty. */
export function authHeaders(token: string | undefined, session: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (token) headers['authorization'] = `Bearer ${token}`;
  if (session) headers['x-service-session'] = session;
  return headers;
}

/**
 * POSTs a JSON body through `transport` and
 * returns the parsed JSON answer. Non-2xx → ArsError (see
 * {@link errorFromAnswer}); no response → ArsError `unavailable`.
 */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
  transport: PostTransport,
): Promise<unknown> {
  let answer: HttpAnswer;
  try {
    answer = await transport(
      url,
      body === undefined ? '' : JSON.stringify(body),
      { 'content-type': 'application/json', accept: 'application/json', ...headers },
      signal,
    );
  } catch (error) {
    // As fetch itself does: the caller's reason, whether the abort came before the answer or while it was read.
    if (signal?.aborted) throw signal.reason;
    throw networkError(url, error);
  }
  if (answer.status < 200 || answer.status > 299) throw errorFromAnswer(answer);
  const { text } = answer;
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw createArsError(
      answer.status,
      'invalid_response',
      `${url} answered ${answer.status} with a body that is not JSON`,
      {
        cause: error,
      },
    );
  }
}
