import type { ConfigChange } from '@ars/contracts';

function parent(root: unknown, path: string): { container: Record<string, unknown> | unknown[]; key: string } {
  const tokens = path
    .split('/')
    .slice(1)
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
  const key = tokens.pop();
  if (key === undefined) throw new Error('the root cannot be patched in place');
  let node = root as Record<string, unknown>;
  for (const token of tokens) node = node[token] as Record<string, unknown>;
  return { container: node, key };
}

/** Applies diff changes in order (RFC 6902 add/remove/replace semantics): test support for diff round trips. */
export function applyChanges(document: unknown, changes: readonly ConfigChange[]): unknown {
  const root = structuredClone(document);
  for (const change of changes) {
    if (change.path === '') return structuredClone(change.after);
    const { container, key } = parent(root, change.path);
    if (Array.isArray(container)) {
      const index = Number(key);
      if (change.op === 'add') container.splice(index, 0, structuredClone(change.after));
      else if (change.op === 'remove') container.splice(index, 1);
      else container[index] = structuredClone(change.after);
    } else if (change.op === 'remove') {
      delete container[key];
    } else {
      container[key] = structuredClone(change.after);
    }
  }
  return root;
}
