/** Longest automatic title, in characters (code points). */
export const AUTO_TITLE_MAX = 80;

/**
 * The automatic title of a session from its first query: the first
 * non-blank line, whitespace collapsed, cut at a word boundary to at most
 * {@link AUTO_TITLE_MAX} characters with an ellipsis. `undefined` when the
 * query has no visible text.
 */
export function deriveTitle(query: string): string | undefined {
  const line = query
    .split(/\r?\n/)
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .find((l) => l !== '');
  if (line === undefined) return undefined;
  const chars = [...line];
  if (chars.length <= AUTO_TITLE_MAX) return line;
  const cut = chars.slice(0, AUTO_TITLE_MAX - 1).join('');
  const space = cut.lastIndexOf(' ');
  const head = space >= AUTO_TITLE_MAX / 2 ? cut.slice(0, space) : cut;
  return `${head.trimEnd()}…`;
}
