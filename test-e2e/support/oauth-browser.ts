import type { EventFrame } from '@ars/contracts';

/**
 * The browser of an OAuth authorization, as e2e tests play it against the
 * testkit's authorization server (`startOAuthMcpServer`, which consents at
 * once for the `login_hint` user) and the gateway's callback.
 */

/** Bounds each request of the browser, in ms (the callback exchanges the code server to server). */
const BROWSER_TIMEOUT_MS = 20_000;

/** A page as the browser received it. */
export interface Page {
  readonly status: number;
  /** The Content-Type header ('' without one). */
  readonly type: string;
  readonly body: string;
}

/**
 * Opens `authorizeUrl` as `user` (its `login_hint`) without following the
 * redirect: answers where the authorization server sends the browser (the
 * callback, with `code` or `error`). Throws when it does not redirect.
 */
export async function followAuthorize(authorizeUrl: string, user: string): Promise<URL> {
  const url = new URL(authorizeUrl);
  url.searchParams.set('login_hint', user);
  const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(BROWSER_TIMEOUT_MS) });
  await response.body?.cancel();
  const location = response.headers.get('location');
  if (response.status !== 302 || location === null) {
    throw new Error(`the authorize URL answered ${response.status}, not a redirect`);
  }
  return new URL(location, url);
}

/** GET `url` as a browser would (no token), without following a redirect. */
export async function visit(url: URL | string): Promise<Page> {
  const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(BROWSER_TIMEOUT_MS) });
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: await response.text() };
}

/**
 * What the scripted model saw of a run: the ReasoningTrace of each
 * `planner.decision` (which digests the messages new to it, tool results
 * included), joined, with JSON's escaped quotes unescaped.
 */
export function modelSaw(frames: readonly EventFrame[]): string {
  return frames
    .filter((f) => f.type === 'planner.decision')
    .map((f) => String((f.payload as Record<string, unknown>)['ReasoningTrace']))
    .join('\n')
    .replaceAll('\\"', '"');
}

/** How many of `secrets` occur in `text` (an assertion expects 0; the secrets themselves are never shown). */
export function secretsIn(text: string, secrets: readonly string[]): number {
  return secrets.filter((secret) => text.includes(secret)).length;
}
