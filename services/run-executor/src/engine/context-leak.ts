import { modelOf } from '../providers/select.ts';
import { occurredAt } from './run-events.ts';
import type { PreparedRun } from './run-prepare.ts';
import type { RunState } from './run-state.ts';

/**
 * Secret-shaped strings caught before they reach a prompt. Content from
 * outside the engine — a tool's result (or error), injected context, a
 * user message — is scanned where it joins the run's messages (so neither
 * the prompt nor the checkpoint holds it); each match is replaced by
 * `[REDACTED:<kind>]` and the site publishes one `llm.context_leak`:
 * LeakSite (`tool_result`, `inject_context`, `user_message`), SizeBytes the
 * UTF-8 bytes removed, Threshold 0 (no secret-shaped byte may pass), the
 * model the prompt was for. The secret itself is never published or logged.
 *
 * Kinds: PEM private keys, `Bearer` tokens, JWTs and provider API keys
 * (OpenAI/Anthropic `sk-`, GitHub `gh?_`, Slack `xox?-`, AWS access key
 * ids, Google `AIza`). Narrower than the publisher's redactor: a hash or an
 * id in a tool's result stays readable to the model.
 */

/** Where content joins a prompt. */
export type LeakSite = 'tool_result' | 'inject_context' | 'user_message';

/** No secret-shaped byte may reach a prompt. */
export const CONTEXT_LEAK_THRESHOLD_BYTES = 0;

const SECRET_SHAPES: readonly { readonly kind: string; readonly re: RegExp }[] = [
  {
    kind: 'private_key',
    re: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  },
  { kind: 'bearer_token', re: /\bBearer\s+[A-Za-z0-9\-._~+/]{16,}=*/gi },
  { kind: 'jwt', re: /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { kind: 'api_key', re: /\b(?:sk|rk)-[A-Za-z0-9_-]{16,}/g },
  { kind: 'api_key', re: /\bgh[pousr]_[A-Za-z0-9]{20,}/g },
  { kind: 'api_key', re: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g },
  { kind: 'api_key', re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { kind: 'api_key', re: /\bAIza[0-9A-Za-z_-]{35}/g },
];

/** `text` with its secret-shaped strings replaced, and the UTF-8 bytes removed (0: nothing found). */
export function redactSecrets(text: string): { readonly text: string; readonly removedBytes: number } {
  let out = text;
  let removedBytes = 0;
  for (const { kind, re } of SECRET_SHAPES) {
    out = out.replace(re, (match) => {
      removedBytes += Buffer.byteLength(match);
      return `[REDACTED:${kind}]`;
    });
  }
  return { text: out, removedBytes };
}

/** `text` as it may join the run's prompt; a leak caught is reported as `llm.context_leak`. */
export function guardPromptContent(run: RunState, prepared: PreparedRun, site: LeakSite, text: string): string {
  const { text: safe, removedBytes } = redactSecrets(text);
  if (removedBytes === 0) return text;
  const { llm } = prepared.call;
  run.log.warn({ site, sizeBytes: removedBytes }, 'secret-shaped content kept out of the prompt');
  run.events.emit('llm.context_leak', {
    Identity: run.events.quad,
    Model: modelOf(llm.settings, llm.params),
    LeakSite: site,
    SizeBytes: removedBytes,
    Threshold: CONTEXT_LEAK_THRESHOLD_BYTES,
    OccurredAt: occurredAt(),
  });
  return safe;
}
