import type { ArsClient } from '@ars/client';
import type { ComponentType } from 'react';

/**
 * Who the console is signed in as: read from the connection token's claims
 * (the gateway verifies the token on every call; the console only displays
 * them). `session` is the token's session claim unless the sign-in form named
 * another (sent as `X-Service-Session`).
 */
export interface Identity {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  /** The token's `scopes` claim: `admin`, `console:fleet`, `agent_config:user`, … */
  readonly scopes: readonly string[];
  /** Token expiry, seconds since the epoch; undefined when the token has no `exp`. */
  readonly expiresAt?: number;
}

/** Route parameters: `:name` segments of the page path, then the query string. */
export type RouteParams = Readonly<Record<string, string | undefined>>;

/** What every page component receives from the shell. Stable: pages depend on it. */
export interface PageProps {
  /** The SDK client, bound to the gateway, the token and the session. */
  readonly client: ArsClient;
  readonly identity: Identity;
  /** Goes to a console path, e.g. `navigate('/runs/' + id)` or `navigate('/runs?scope=tenant')`. */
  readonly navigate: (path: string) => void;
  /** `:name` segments of the matched path plus query parameters (`?a=b`). */
  readonly params: RouteParams;
  /** The raw token, for the rare page that must show or hand it on. */
  readonly token: string;
}

/** The metadata a page module exports as `page`. */
export interface ConsolePage {
  /** The route, under the console's hash: `/runs`, `/runs/:taskId`. Static segments win over `:params`. */
  readonly path: string;
  /** Shown in the nav and as the document title. */
  readonly title: string;
  /** Listed in the navigation bar. @default false */
  readonly nav?: boolean;
  /** Position in the nav, lower first; ties by title. @default 100 */
  readonly order?: number;
  /**
   * Scopes of which the caller needs one for the nav to list the page (the
   * page stays reachable by its address, and the gateway still decides: a
   * refusal is shown as its 403). @default none
   */
  readonly navScopes?: readonly string[];
}

/** A discovered page: its metadata and component. */
export interface PageModule {
  readonly page: ConsolePage;
  readonly default: ComponentType<PageProps>;
}
