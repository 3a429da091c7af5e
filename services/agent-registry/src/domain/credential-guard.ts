import { pointerToken } from './config-diff.ts';

/**
 * Secrets never enter a revision. The configuration schema has no member for
 * one (API keys live in governance, `governance.rotate_key`; OAuth client
 * secrets with the provider's `credential_broker`), so this guard looks for a
 * credential smuggled into a string of the members that talk to the outside:
 * the LLM provider, MCP connections and discovery origins, OAuth providers
 * and capabilities.
 */

/** Shapes of credentials inside a string. */
const CREDENTIAL_SHAPES: readonly RegExp[] = [
  // URL userinfo with a password: scheme://user:password@host
  /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]+:[^\s/@]+@/i,
  // A bearer token (with a digit, so that prose such as "Bearer tokens" passes).
  /\bBearer\s+(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{16,}/i,
  // JWT / JWS compact serialisation.
  /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\./,
  // Provider API keys: sk-…, GitHub, Slack, AWS, Google.
  /\b(sk|pk|rk)[-_][A-Za-z0-9_-]{16,}/,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/,
  /\b(AKIA|ASIA)[0-9A-Z]{16}\b/,
  /\bAIza[0-9A-Za-z_-]{30,}/,
  // key=value forms (query strings, command-line flags).
  /(api[-_]?key|apikey|access[-_]?token|refresh[-_]?token|client[-_]?secret|secret|password|passwd|token)\s*[:=]\s*[^\s&]+/i,
];

/** A command-line flag whose next argument is a secret (`--token abc`). */
const SECRET_FLAG = /^--?[A-Za-z0-9_-]*(token|secret|password|passwd|api[-_]?key|apikey)$/i;

/** The configuration members that hold addresses and credential references. */
const GUARDED_MEMBERS = [
  'llm_provider',
  'mcp_connections',
  'mcp_discovery_origins',
  'oauth_providers',
  'oauth_mcp_capabilities',
] as const;

/** The scripted provider's turns are model output, not addresses. */
const UNGUARDED_PATHS = new Set(['/llm_provider/script']);

/** True when `text` holds something shaped like a credential. */
export function looksLikeCredential(text: string): boolean {
  return CREDENTIAL_SHAPES.some((shape) => shape.test(text));
}

function scan(path: string, value: unknown): string | undefined {
  if (UNGUARDED_PATHS.has(path)) return undefined;
  if (typeof value === 'string') return looksLikeCredential(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const item = value[i];
      if (typeof item === 'string' && SECRET_FLAG.test(item) && i + 1 < value.length) return `${path}/${i + 1}`;
      const found = scan(`${path}/${i}`, item);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, member] of Object.entries(value)) {
      const found = scan(`${path}/${pointerToken(key)}`, member);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * The JSON Pointer of the first credential-shaped string in the guarded
 * members of `config`, or undefined. Callers name the path, never the value.
 */
export function findCredential(config: Readonly<Record<string, unknown>>): string | undefined {
  for (const member of GUARDED_MEMBERS) {
    const found = scan(`/${member}`, config[member]);
    if (found !== undefined) return found;
  }
  return undefined;
}
