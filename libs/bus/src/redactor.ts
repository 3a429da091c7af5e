/**
 * The redactor of `redacted`-class event payloads: subscribers receive a map
 * holding only the keys the payload schema declares, with every string value
 * scrubbed of secret-shaped data.
 */

/** What replaces a secret-shaped value or substring. */
export const REDACTED = '[REDACTED]';

/** Nested values deeper than this make the redactor fail (the caller publishes `audit.redaction_failed`). */
export const MAX_REDACTION_DEPTH = 16;

/** Nested keys (lower-cased, punctuation removed) ending like these have their value dropped whole. */
const SECRET_KEY_SUFFIXES = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'token',
  'apikey',
  'authorization',
  'credential',
  'credentials',
  'privatekey',
  'cookie',
  'signature',
] as const;

function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  return SECRET_KEY_SUFFIXES.some((suffix) => k.endsWith(suffix));
}

/** A pattern replaced inside any string; `replacement` may keep capture groups. */
interface SecretPattern {
  readonly re: RegExp;
  readonly replacement: string;
}

/** Applied in this order, the more specific first. */
const SECRET_PATTERNS: readonly SecretPattern[] = [
  // HTTP authorization values, scheme included.
  { re: /\b(Bearer|Basic|Token|Digest)\s+[A-Za-z0-9._~+/=-]{6,}/gi, replacement: REDACTED },
  // JWT / JWS / JWE compact serialisation: a base64url JSON header starts with "eyJ".
  { re: /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}(\.[A-Za-z0-9_-]*){1,3}/g, replacement: REDACTED },
  // Provider API keys: OpenAI/Anthropic/Stripe `sk-…`, GitHub, Slack, AWS, Google.
  { re: /\b(sk|pk|rk)[-_][A-Za-z0-9_-]{16,}/g, replacement: REDACTED },
  { re: /\bgh[pousr]_[A-Za-z0-9]{20,}/g, replacement: REDACTED },
  { re: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, replacement: REDACTED },
  { re: /\b(AKIA|ASIA)[0-9A-Z]{16}\b/g, replacement: REDACTED },
  { re: /\bAIza[0-9A-Za-z_-]{30,}/g, replacement: REDACTED },
  // key=value and key: value forms of credentials (query strings, config dumps): keep the key.
  {
    re: /\b(api[-_]?key|apikey|access[-_]?token|refresh[-_]?token|client[-_]?secret|secret|password|passwd|token)(["']?\s*[:=]\s*["']?)[^\s"'&,;]+/gi,
    replacement: `$1$2${REDACTED}`,
  },
  // URL userinfo: scheme://user:password@host
  { re: /(?<=[a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+:[^\s/@]+(?=@)/gi, replacement: REDACTED },
  // Email addresses.
  { re: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g, replacement: REDACTED },
  // Long hex strings (keys, HMACs, raw tokens).
  { re: /\b[0-9a-fA-F]{32,}\b/g, replacement: REDACTED },
];

/** Long runs of base64-alphabet characters; whether one is a secret is decided by {@link looksRandom}. */
const BASE64_RUN_RE = /[A-Za-z0-9+/_-]{40,}={0,2}/g;

/**
 * True for a base64-looking run with upper case, lower case and digits and few
 * slashes: random key material rather than a path or an identifier.
 */
function looksRandom(run: string): boolean {
  const slashes = run.split('/').length - 1;
  return /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run) && slashes <= run.length / 20;
}

/** Replaces every secret-shaped substring of `s` by {@link REDACTED}. */
export function scrubString(s: string): string {
  let out = s;
  for (const { re, replacement } of SECRET_PATTERNS) out = out.replace(re, replacement);
  return out.replace(BASE64_RUN_RE, (run) => (looksRandom(run) ? REDACTED : run));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Scrubs a value deeply: strings through {@link scrubString}, nested members
 * with a secret-shaped key replaced whole. Throws beyond
 * {@link MAX_REDACTION_DEPTH} or on a value it cannot represent as JSON.
 */
export function scrubValue(value: unknown, depth = 0): unknown {
  if (depth > MAX_REDACTION_DEPTH) throw new Error(`payload nested deeper than ${MAX_REDACTION_DEPTH}`);
  if (typeof value === 'string') return scrubString(value);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, depth + 1));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      out[k] = isSecretKey(k) ? REDACTED : scrubValue(v, depth + 1);
    }
    return out;
  }
  throw new Error(`cannot redact a value of type ${typeof value}`);
}

/** The keys an object schema declares (zod's `shape`); throws for any other schema. */
export function declaredKeys(schema: unknown): readonly string[] {
  const shape = (schema as { shape?: unknown } | null)?.shape;
  if (typeof shape !== 'object' || shape === null) throw new Error('the payload schema declares no object shape');
  return Object.keys(shape);
}

/**
 * Derives the delivered map of a `redacted` payload: only the keys `schema`
 * declares, each value scrubbed. Throws when the payload is not an object or
 * cannot be redacted; the caller must then never publish the raw payload.
 */
export function redactPayload(schema: unknown, payload: unknown): Record<string, unknown> {
  if (!isPlainObject(payload)) throw new Error('a redacted payload must be an object');
  const out: Record<string, unknown> = {};
  for (const key of declaredKeys(schema)) {
    const value = payload[key];
    if (value !== undefined) out[key] = scrubValue(value, 1);
  }
  return out;
}
