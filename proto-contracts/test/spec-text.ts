import { readFileSync } from 'node:fs';

/**
 * The two spec documents, copied verbatim into proto-contracts/spec/ (the
 * contract travels with the repository so that CI can read it).
 */
const specFile = (name: string): string => readFileSync(new URL(`../spec/${name}`, import.meta.url), 'utf8');

export const PROTOCOL_SPEC = specFile('protocol-reference.md');
export const EVENT_SPEC = specFile('event-stream-reference.md');

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** True when `name` occurs in `text` as a whole token (not inside a longer dotted or snake name). */
export function mentions(text: string, name: string): boolean {
  return new RegExp(`(?<![\\w.])${escape(name)}(?![\\w]|\\.\\w)`).test(text);
}

/**
 * Every event type the event document registers: the first cell of each
 * table row under "## Events" (expanding `a.b, .c` shorthand into `a.c`)
 * plus the backticked list of notification events.
 */
export function specEventTypes(): Set<string> {
  const types = new Set<string>();
  for (const line of EVENT_SPEC.split('\n')) {
    const cell = /^\| ([a-z_.]+(?:, [a-z_.]+)*) \|/.exec(line)?.[1];
    if (cell === undefined) continue;
    let prefix = '';
    for (const part of cell.split(', ')) {
      if (part.startsWith('.')) {
        types.add(`${prefix}${part}`);
      } else {
        types.add(part);
        prefix = part.slice(0, part.lastIndexOf('.'));
      }
    }
  }
  const notifications = /^Events: (.+)\.$/m.exec(EVENT_SPEC)?.[1] ?? '';
  for (const match of notifications.matchAll(/`([a-z_.]+)`/g)) types.add(match[1] ?? '');
  return types;
}
