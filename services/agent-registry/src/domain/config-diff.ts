import type { ConfigChange } from '@ars/contracts';
import { canonicalJson } from '@ars/service-kit';

/** One JSON Pointer reference token (RFC 6901): `~` → `~0`, `/` → `~1`. */
export function pointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

function walkObject(
  path: string,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  out: ConfigChange[],
) {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  for (const key of keys) {
    const child = `${path}/${pointerToken(key)}`;
    const had = before[key] !== undefined;
    const has = after[key] !== undefined;
    if (!had && has) out.push({ path: child, op: 'add', after: after[key] });
    else if (had && !has) out.push({ path: child, op: 'remove', before: before[key] });
    else if (had && has) walk(child, before[key], after[key], out);
  }
}

/**
 * Arrays compare position by position; a longer `after` adds its tail in
 * ascending order, a shorter one removes the surplus from the end (highest
 * index first), so the changes apply in sequence as an RFC 6902 patch would.
 */
function walkArray(path: string, before: unknown[], after: unknown[], out: ConfigChange[]) {
  const common = Math.min(before.length, after.length);
  for (let i = 0; i < common; i += 1) walk(`${path}/${i}`, before[i], after[i], out);
  for (let i = common; i < after.length; i += 1) out.push({ path: `${path}/${i}`, op: 'add', after: after[i] });
  for (let i = before.length - 1; i >= common; i -= 1)
    out.push({ path: `${path}/${i}`, op: 'remove', before: before[i] });
}

function walk(path: string, before: unknown, after: unknown, out: ConfigChange[]): void {
  if (same(before, after)) return;
  if (isObject(before) && isObject(after)) return walkObject(path, before, after, out);
  if (Array.isArray(before) && Array.isArray(after)) return walkArray(path, before, after, out);
  out.push({ path, op: 'replace', before, after });
}

/**
 * The structural diff from one configuration to another: every leaf that
 * differs, as `{path, op, before?, after?}` with `path` a JSON Pointer into
 * the configuration. Objects recurse by member (sorted), arrays by position;
 * a value whose type changes is replaced whole. Key order never counts
 * (the canonical JSON is compared). Identical configurations give `[]`.
 */
export function diffConfigs(before: unknown, after: unknown): ConfigChange[] {
  const changes: ConfigChange[] = [];
  walk('', before, after, changes);
  return changes;
}
