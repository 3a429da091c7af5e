import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Prompt, Resource, Tool } from '@modelcontextprotocol/sdk/types.js';

/**
 * Discovery of one MCP server: tools/list, prompts/list and resources/list,
 * each followed through its cursors, for what the server's capabilities
 * announce (a list it does not announce is empty, not asked).
 */

/** Pages followed per list at most: a server whose cursors never end is not followed forever. */
export const MAX_DISCOVERY_PAGES = 100;

/** What one discovery found. */
export interface Discovery {
  readonly tools: readonly Tool[];
  readonly prompts: readonly Prompt[];
  readonly resources: readonly Resource[];
  /** ISO 8601 UTC: when it completed. */
  readonly at: string;
}

type PageFetch<T> = (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>;

/** Every item of a paginated list (at most {@link MAX_DISCOVERY_PAGES} pages; a repeated cursor ends it). */
export async function listAll<T>(fetch: PageFetch<T>): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_DISCOVERY_PAGES; page += 1) {
    const result = await fetch(cursor);
    items.push(...result.items);
    if (result.nextCursor === undefined || result.nextCursor === '' || seen.has(result.nextCursor)) break;
    seen.add(result.nextCursor);
    cursor = result.nextCursor;
  }
  return items;
}

const params = (cursor: string | undefined) => (cursor === undefined ? undefined : { cursor });

/** The server's tools (none when it announces no `tools` capability). */
export function listTools(client: Client, timeoutMs: number): Promise<Tool[]> {
  if (client.getServerCapabilities()?.tools === undefined) return Promise.resolve([]);
  return listAll(async (cursor) => {
    const page = await client.listTools(params(cursor), { timeout: timeoutMs });
    return { items: page.tools, nextCursor: page.nextCursor };
  });
}

/** The server's prompts (none without a `prompts` capability). */
export function listPrompts(client: Client, timeoutMs: number): Promise<Prompt[]> {
  if (client.getServerCapabilities()?.prompts === undefined) return Promise.resolve([]);
  return listAll(async (cursor) => {
    const page = await client.listPrompts(params(cursor), { timeout: timeoutMs });
    return { items: page.prompts, nextCursor: page.nextCursor };
  });
}

/** The server's resources (none without a `resources` capability). */
export function listResources(client: Client, timeoutMs: number): Promise<Resource[]> {
  if (client.getServerCapabilities()?.resources === undefined) return Promise.resolve([]);
  return listAll(async (cursor) => {
    const page = await client.listResources(params(cursor), { timeout: timeoutMs });
    return { items: page.resources, nextCursor: page.nextCursor };
  });
}

/** The three lists, asked at once. */
export async function discover(client: Client, timeoutMs: number): Promise<Discovery> {
  const [tools, prompts, resources] = await Promise.all([
    listTools(client, timeoutMs),
    listPrompts(client, timeoutMs),
    listResources(client, timeoutMs),
  ]);
  return { tools, prompts, resources, at: new Date().toISOString() };
}

interface Listed<T> {
  readonly items: readonly T[];
  readonly generation: number;
}

/**
 * One connection's discovery as last listed. Each list asked takes a
 * generation number first; a list answered later than a newer one (asked
 * after it) is dropped, so a `list_changed` refresh is never undone by a
 * slower discovery that started before it.
 */
export class DiscoveryCache {
  #tools: Listed<Tool> = { items: [], generation: 0 };
  #prompts: Listed<Prompt> = { items: [], generation: 0 };
  #resources: Listed<Resource> = { items: [], generation: 0 };
  #generation = 0;
  #at: string | undefined;

  get tools(): readonly Tool[] {
    return this.#tools.items;
  }

  get prompts(): readonly Prompt[] {
    return this.#prompts.items;
  }

  get resources(): readonly Resource[] {
    return this.#resources.items;
  }

  /** ISO 8601 UTC of the last list applied; undefined before the first. */
  get at(): string | undefined {
    return this.#at;
  }

  /** The generation of a list about to be asked. */
  next(): number {
    this.#generation += 1;
    return this.#generation;
  }

  setTools(generation: number, items: readonly Tool[]): void {
    if (generation >= this.#tools.generation) this.#tools = this.#stamp({ items, generation });
  }

  setPrompts(generation: number, items: readonly Prompt[]): void {
    if (generation >= this.#prompts.generation) this.#prompts = this.#stamp({ items, generation });
  }

  setResources(generation: number, items: readonly Resource[]): void {
    if (generation >= this.#resources.generation) this.#resources = this.#stamp({ items, generation });
  }

  /** A whole discovery asked at `generation`. */
  setAll(generation: number, found: Discovery): void {
    this.setTools(generation, found.tools);
    this.setPrompts(generation, found.prompts);
    this.setResources(generation, found.resources);
  }

  #stamp<T>(listed: Listed<T>): Listed<T> {
    this.#at = new Date().toISOString();
    return listed;
  }
}
