/**
 * A Tiltfile read as data: its `load()`s, its `def`s and every function call
 * with its positional and keyword arguments (strings, lists, numbers, booleans
 * and nested calls). Tilt cannot run here, so this is how its references are
 * checked against the repository and the chart. Starlark is a Python subset;
 * this reader covers the literal forms a Tiltfile uses and keeps anything
 * else as an opaque expression.
 */

/** A value as written in the Tiltfile. */
export type TiltValue = string | number | boolean | null | TiltValue[] | TiltCall | { readonly expression: string };

/** One call: `name(arg, key=value)`; `receiver.name(...)` keeps the receiver in `name`. */
export interface TiltCall {
  readonly name: string;
  readonly args: readonly TiltValue[];
  readonly kwargs: Readonly<Record<string, TiltValue>>;
  /** 1-based line. */
  readonly line: number;
}

export interface Tiltfile {
  /** Every call, nested ones included, in source order. */
  readonly calls: readonly TiltCall[];
  /** Names bound by `load()`: extension symbol → the module it came from. */
  readonly loaded: ReadonlyMap<string, string>;
  /** Names defined with `def`. */
  readonly defined: ReadonlySet<string>;
  /** Names assigned at top level (`x = …`). */
  readonly assigned: ReadonlySet<string>;
}

function stripComments(text: string): string {
  let out = '';
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] ?? '';
    if (quote !== undefined) {
      out += char;
      if (char === '\\') out += text[++i] ?? '';
      else if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") {
      quote = char;
      out += char;
    } else if (char === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else out += char;
  }
  return out;
}

class Reader {
  private at = 0;
  readonly calls: TiltCall[] = [];
  private readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  private lineAt(position: number): number {
    return this.text.slice(0, position).split('\n').length;
  }

  private skipSpace(): void {
    while (this.at < this.text.length && /\s/.test(this.text[this.at] ?? '')) this.at++;
  }

  private readString(): string {
    const quote = this.text[this.at] ?? '"';
    let value = '';
    this.at++;
    while (this.at < this.text.length && this.text[this.at] !== quote) {
      if (this.text[this.at] === '\\') this.at++;
      value += this.text[this.at] ?? '';
      this.at++;
    }
    this.at++;
    return value;
  }

  /** Reads one expression up to a top-level `,` or closing bracket. */
  readValue(): TiltValue {
    this.skipSpace();
    const start = this.at;
    const char = this.text[this.at];
    if (char === '"' || char === "'") {
      let value = this.readString();
      this.skipSpace();
      // Adjacent literals and `+` concatenation of literals.
      while (this.text[this.at] === '"' || this.text[this.at] === "'" || this.text[this.at] === '+') {
        if (this.text[this.at] === '+') {
          this.at++;
          this.skipSpace();
          if (this.text[this.at] !== '"' && this.text[this.at] !== "'") return this.opaqueFrom(start);
        }
        value += this.readString();
        this.skipSpace();
      }
      return this.endsHere() ? value : this.opaqueFrom(start);
    }
    if (char === '[') {
      this.at++;
      const items = this.readList(']');
      return this.endsHere() ? items : this.opaqueFrom(start);
    }
    const identifier = /^[A-Za-z_][\w.]*/.exec(this.text.slice(this.at))?.[0];
    if (identifier !== undefined) {
      this.at += identifier.length;
      this.skipSpace();
      if (this.text[this.at] === '(') {
        const call = this.readCall(identifier, start);
        return this.endsHere() ? call : this.opaqueFrom(start);
      }
      if (this.endsHere()) {
        if (identifier === 'True' || identifier === 'False') return identifier === 'True';
        if (identifier === 'None') return null;
        return { expression: identifier };
      }
      return this.opaqueFrom(start);
    }
    const number = /^-?\d+(\.\d+)?/.exec(this.text.slice(this.at))?.[0];
    if (number !== undefined) {
      this.at += number.length;
      if (this.endsHere()) return Number(number);
    }
    return this.opaqueFrom(start);
  }

  private endsHere(): boolean {
    this.skipSpace();
    const char = this.text[this.at];
    return char === undefined || char === ',' || char === ')' || char === ']' || char === '}' || char === '\n';
  }

  /** Skips to the end of an expression we do not model, keeping its text. */
  private opaqueFrom(start: number): TiltValue {
    let depth = 0;
    while (this.at < this.text.length) {
      const char = this.text[this.at] ?? '';
      if (char === '"' || char === "'") {
        this.readString();
        continue;
      }
      if (char === '(' || char === '[' || char === '{') depth++;
      else if (char === ')' || char === ']' || char === '}') {
        if (depth === 0) break;
        depth--;
      } else if (char === ',' && depth === 0) break;
      this.at++;
    }
    return { expression: this.text.slice(start, this.at).trim() };
  }

  private readList(close: string): TiltValue[] {
    const items: TiltValue[] = [];
    for (;;) {
      this.skipSpace();
      if (this.text[this.at] === close) {
        this.at++;
        return items;
      }
      items.push(this.readValue());
      this.skipSpace();
      if (this.text[this.at] === ',') this.at++;
      else if (this.text[this.at] !== close) throw new Error(`Tiltfile: expected , or ${close} at line ${this.lineAt(this.at)}`);
    }
  }

  readCall(name: string, start: number): TiltCall {
    this.at++; // (
    const args: TiltValue[] = [];
    const kwargs: Record<string, TiltValue> = {};
    for (;;) {
      this.skipSpace();
      if (this.text[this.at] === ')') {
        this.at++;
        break;
      }
      const keyword = /^([A-Za-z_]\w*)\s*=(?!=)/.exec(this.text.slice(this.at));
      if (keyword !== null) {
        this.at += keyword[0].length;
        kwargs[keyword[1] ?? ''] = this.readValue();
      } else args.push(this.readValue());
      this.skipSpace();
      if (this.text[this.at] === ',') this.at++;
      else if (this.text[this.at] !== ')') throw new Error(`Tiltfile: expected , or ) at line ${this.lineAt(this.at)}`);
    }
    const call: TiltCall = { name, args, kwargs, line: this.lineAt(start) };
    this.calls.push(call);
    return call;
  }

  /** Finds every call in the text, top level and nested. */
  readAll(): void {
    while (this.at < this.text.length) {
      const char = this.text[this.at] ?? '';
      if (char === '"' || char === "'") {
        this.readString();
        continue;
      }
      const match = /^[A-Za-z_][\w.]*/.exec(this.text.slice(this.at));
      const previous = this.text[this.at - 1] ?? ' ';
      if (match !== null && !/[\w.]/.test(previous)) {
        const start = this.at;
        this.at += match[0].length;
        this.skipSpace();
        if (this.text[this.at] === '(' && !/^def\b/.test(this.text.slice(Math.max(0, start - 4), start))) {
          this.readCall(match[0], start);
        }
        continue;
      }
      this.at++;
    }
  }
}

/** Reads a Tiltfile's text. */
export function parseTiltfile(text: string): Tiltfile {
  const source = stripComments(text);
  const reader = new Reader(source);
  reader.readAll();
  const calls = [...reader.calls].sort((a, b) => a.line - b.line);
  const loaded = new Map<string, string>();
  for (const call of calls.filter((c) => c.name === 'load')) {
    const [module, ...symbols] = call.args;
    if (typeof module !== 'string') continue;
    for (const symbol of symbols) if (typeof symbol === 'string') loaded.set(symbol, module);
    for (const alias of Object.keys(call.kwargs)) loaded.set(alias, module);
  }
  const defined = new Set([...source.matchAll(/^\s*def\s+([A-Za-z_]\w*)/gm)].map((m) => m[1] ?? ''));
  const assigned = new Set([...source.matchAll(/^([A-Za-z_]\w*)\s*=(?!=)/gm)].map((m) => m[1] ?? ''));
  return { calls, loaded, defined, assigned };
}

/**
 * Tilt's built-in functions (docs.tilt.dev/api.html) and Starlark's: a call
 * to anything else must be `load()`-ed or `def`-ined first.
 */
export const TILT_BUILTINS: ReadonlySet<string> = new Set([
  'allow_k8s_contexts', 'analytics_settings', 'blob', 'ci_settings', 'custom_build', 'decode_json', 'decode_yaml',
  'decode_yaml_stream', 'default_registry', 'disable_snapshots', 'docker_build', 'docker_compose', 'docker_prune_settings',
  'dc_resource', 'enable_feature', 'encode_json', 'encode_yaml', 'encode_yaml_stream', 'experimental_analytics_report',
  'fall_back_on', 'filter_yaml', 'helm', 'include', 'initial_sync', 'k8s_custom_deploy', 'k8s_context', 'k8s_kind',
  'k8s_namespace', 'k8s_resource', 'k8s_yaml', 'link', 'listdir', 'load', 'load_dynamic', 'local', 'local_resource',
  'port_forward', 'read_file', 'read_json', 'read_yaml', 'read_yaml_stream', 'restart_container', 'run', 'secret_settings',
  'set_team', 'sync', 'trigger_mode', 'update_settings', 'version_settings', 'watch_file', 'watch_settings', 'warn',
  'v1alpha1.extension', 'v1alpha1.extension_repo',
  // Starlark
  'all', 'any', 'bool', 'dict', 'dir', 'enumerate', 'fail', 'getattr', 'hasattr', 'hash', 'int', 'len', 'list', 'max',
  'min', 'print', 'range', 'repr', 'reversed', 'sorted', 'str', 'tuple', 'type', 'zip',
]);

/** Calls to functions that are neither built in, loaded, defined, nor a method (`config.define_bool`, `os.path.join`). */
export function unresolvedCalls(tiltfile: Tiltfile): TiltCall[] {
  return tiltfile.calls.filter((call) => {
    if (call.name.includes('.')) {
      const receiver = call.name.split('.')[0] ?? '';
      return !['config', 'os', 'str', 'json', 'v1alpha1', 'k8s'].includes(receiver) && !tiltfile.assigned.has(receiver);
    }
    return !TILT_BUILTINS.has(call.name) && !tiltfile.loaded.has(call.name) && !tiltfile.defined.has(call.name);
  });
}
