import { ArsError, errorFromAnswer, networkError } from './errors.ts';
import { defaultTransport } from './transport.ts';
import type { HttpAnswer } from './transport.ts';

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
 * POSTs a JSON body (through the runtime's {@link defaultTransport}) and
 * returns the parsed JSON answer. Non-2xx → ArsError (see
 * {@link errorFromAnswer}); no response → ArsError `unavailable`.
 */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<unknown> {
  let answer: HttpAnswer;
  try {
    answer = await defaultTransport(
      url,
      body === undefined ? '' : JSON.stringify(body),
      { 'content-type': 'application/json', accept: 'application/json', ...headers },
      signal,
    );
  } catch (error) {
    if (signal?.aborted) throw error;
    throw networkError(url, error);
  }
  if (answer.status < 200 || answer.status > 299) throw errorFromAnswer(answer);
  const { text } = answer;
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ArsError(
      answer.status,
      'invalid_response',
      `${url} answered ${answer.status} with a body that is not JSON`,
      {
        cause: error,
      },
    );
  }
}
