/**
 * How the client sends a JSON POST: the transport interface and the global
 * `fetch` transport (browsers, Deno, Bun, and any runtime without node:http).
 * No node: import here: this module is part of the browser entry. The
 * Node.js transport is in `transport.ts`. The event stream always uses
 * `fetch` (a long-lived streamed body, where the per-request cost does not matter).
 */

/** A response read to its end. */
export interface HttpAnswer {
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly text: string;
}

/** Sends `body` (JSON text) and reads the whole answer; rejects when no answer came (aborts included). */
export type PostTransport = (
  url: string,
  body: string,
  headers: Record<string, string>,
  signal?: AbortSignal,
) => Promise<HttpAnswer>;

export const fetchTransport: PostTransport = async (url, body, headers, signal) => {
  const response = await fetch(url, { method: 'POST', headers, body, ...(signal ? { signal } : {}) });
  const text = await response.text();
  return { status: response.status, statusText: response.statusText, url: response.url || url, text };
};
