import { z } from 'zod';
import { defineMethod } from '../method-def.ts';
import type { MethodDef, ServiceName } from '../method-def.ts';
import { pageOf, pageRequest, requestOf, versioned } from '../schemas/common.ts';
import { SearchFilter, SearchHit, SearchKind } from '../schemas/search.ts';
import { onControl } from './routing.ts';

/** SearchRequest of every search.* method: free text plus the folding filter. */
export const SearchRequest = requestOf({
  query: z.string().min(1).max(1024).optional().describe('free text; absent: filter only, newest first'),
  filter: SearchFilter.optional(),
  ...pageRequest,
});
export type SearchRequest = z.infer<typeof SearchRequest>;

/** A page of hits; `partial` is true when an owner did not answer a search.query fan-out. */
export const SearchResponse = versioned({
  ...pageOf(SearchHit),
  partial: z.boolean().optional(),
  failed_kinds: z.array(SearchKind).optional().describe('search.query: the owners that did not answer'),
});
export type SearchResponse = z.infer<typeof SearchResponse>;

const SEARCHES: ReadonlyArray<readonly [name: string, service: ServiceName, summary: string]> = [
  ['search.artifacts', 'artifact', 'Search artifact metadata.'],
  ['search.events', 'gateway', 'Search stored events.'],
  ['search.query', 'gateway', 'Search tasks, sessions, artifacts and events at once (fan-out to their owners).'],
  ['search.sessions', 'session', 'Search sessions.'],
  ['search.tasks', 'run-executor', 'Search tasks.'],
];

/** search.* (R, X): `/v1/control/<method>`. */
export const SEARCH_METHODS: readonly MethodDef[] = SEARCHES.map(([name, service, summary]) =>
  defineMethod({
    name,
    family: 'search',
    ...onControl(name),
    service,
    auth: ['R', 'X'],
    requestName: 'SearchRequest',
    responseName: 'SearchResponse',
    request: SearchRequest,
    response: SearchResponse,
    summary,
  }),
);
