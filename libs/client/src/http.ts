import { ArsError, errorFromResponse, networkError } from './errors.ts';

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
 * POSTs a JSON body and returns the parsed JSON answer. Non-2xx → ArsError
 * (see {@link errorFromResponse}); no response → ArsError `unavailable`.
 */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw networkError(url, error);
  }
  if (!response.ok) throw await errorFromResponse(response);
  const text = await response.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ArsError(
      response.status,
      'invalid_response',
      `${url} answered ${response.status} with a body that is not JSON`,
      {
        cause: error,
      },
    );
  }
}
