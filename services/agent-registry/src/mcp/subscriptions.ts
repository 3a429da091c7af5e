import type { IdentityQuad } from '@ars/contracts';

/** Subscribers kept per resource at most (each gets its own `mcp.resource_updated`); the oldest goes first. */
export const MAX_SUBSCRIBERS_PER_URI = 64;

/** The resources a connection subscribed to, with who read each (the identities its updates go to). */
export class ResourceSubscriptions {
  readonly #byUri = new Map<string, Map<string, IdentityQuad>>();

  /** Adds `subscriber` to `uri`; true when it is the resource's first (the server is to be asked to subscribe). */
  add(uri: string, subscriber: IdentityQuad): boolean {
    const subscribers = this.#byUri.get(uri) ?? new Map<string, IdentityQuad>();
    const first = subscribers.size === 0;
    const id = [subscriber.tenant, subscriber.user, subscriber.session, subscriber.run].join('\u0000');
    if (!subscribers.has(id) && subscribers.size >= MAX_SUBSCRIBERS_PER_URI) {
      subscribers.delete(subscribers.keys().next().value as string);
    }
    subscribers.set(id, subscriber);
    this.#byUri.set(uri, subscribers);
    return first;
  }

  /** Who read `uri` (none: not subscribed). */
  of(uri: string): IdentityQuad[] {
    return [...(this.#byUri.get(uri)?.values() ?? [])];
  }

  /** Every subscribed resource (to subscribe again after a reopen). */
  uris(): string[] {
    return [...this.#byUri.keys()];
  }
}
