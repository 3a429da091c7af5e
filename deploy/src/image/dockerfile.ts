/**
 * A Dockerfile read into its instructions and build stages: enough to check
 * what the image is made of without a Docker daemon (none runs here).
 */

/** One instruction: `COPY --from=deps /app /app` → keyword COPY, arguments the rest. */
export interface Instruction {
  readonly keyword: string;
  readonly arguments: string;
  /** 1-based line of the instruction's first line. */
  readonly line: number;
}

/** A `FROM … [AS name]` and the instructions after it. */
export interface Stage {
  readonly base: string;
  readonly name: string | undefined;
  readonly instructions: readonly Instruction[];
}

/** Instructions in order: comments and blank lines dropped, `\` continuations joined. */
export function parseInstructions(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending: { text: string; line: number } | undefined;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trimEnd();
    if (pending === undefined && (line.trim() === '' || line.trimStart().startsWith('#'))) return;
    if (pending !== undefined && line.trimStart().startsWith('#')) return;
    const continues = line.endsWith('\\');
    const content = continues ? line.slice(0, -1) : line;
    pending = pending === undefined ? { text: content.trim(), line: index + 1 } : { ...pending, text: `${pending.text} ${content.trim()}` };
    if (continues) return;
    const [keyword = '', ...rest] = pending.text.split(/\s+/);
    instructions.push({ keyword: keyword.toUpperCase(), arguments: rest.join(' '), line: pending.line });
    pending = undefined;
  });
  return instructions;
}

/** The build stages, each from its FROM; instructions before the first FROM (ARG) are dropped. */
export function parseStages(text: string): Stage[] {
  const stages: { base: string; name: string | undefined; instructions: Instruction[] }[] = [];
  for (const instruction of parseInstructions(text)) {
    if (instruction.keyword === 'FROM') {
      const parts = instruction.arguments.split(/\s+/).filter((part) => !part.startsWith('--'));
      const asIndex = parts.findIndex((part) => part.toUpperCase() === 'AS');
      stages.push({ base: parts[0] ?? '', name: asIndex >= 0 ? parts[asIndex + 1] : undefined, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return stages;
}

/** The user the stage's process runs as: its last USER, else root. */
export function effectiveUser(stage: Stage): string {
  const users = stage.instructions.filter((instruction) => instruction.keyword === 'USER');
  return users.at(-1)?.arguments.split(':')[0]?.trim() ?? 'root';
}

/** `.dockerignore` patterns: comments and blank lines dropped, leading `/` and trailing `/` removed. */
export function parseDockerignore(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => line.replace(/^\/+/, '').replace(/\/+$/, ''));
}

function patternToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i] ?? '';
    if (char === '*' && pattern[i + 1] === '*') {
      i++;
      // `**/` is any number of whole directories, none included.
      if (pattern[i + 1] === '/') {
        source += '(?:.*/)?';
        i++;
      } else source += '.*';
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/**
 * Whether the build context leaves `path` (relative, `/`-separated) out:
 * the last matching pattern decides (`!` re-includes), and a pattern that
 * matches a directory leaves out everything under it, as Docker does.
 */
export function isIgnored(patterns: readonly string[], path: string): boolean {
  const segments = path.split('/');
  const prefixes = segments.map((_, index) => segments.slice(0, index + 1).join('/'));
  let ignored = false;
  for (const raw of patterns) {
    const negated = raw.startsWith('!');
    const matcher = patternToRegExp(negated ? raw.slice(1) : raw);
    if (prefixes.some((prefix) => matcher.test(prefix))) ignored = !negated;
  }
  return ignored;
}
