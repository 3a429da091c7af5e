import { createOpenAiProvider } from './openai.ts';
import type { LlmProvider, ProviderSettings } from './provider.ts';
import { createScriptedProvider } from './scripted.ts';

/** The model an openai installation uses when neither the provider nor `llm_params` names one. */
export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';

/** Executor-wide provider defaults. */
export interface ProviderDefaults {
  /** Key for openai installations whose configuration carries none. */
  readonly apiKey?: string | undefined;
  /** Per-request timeout of openai calls, in ms. */
  readonly timeoutMs?: number | undefined;
}

const sharedScripted = createScriptedProvider();

/** The provider of a run's agent configuration. */
export function providerFor(settings: ProviderSettings, defaults: ProviderDefaults = {}): LlmProvider {
  if (settings.kind === 'openai') {
    return createOpenAiProvider({
      baseUrl: settings.baseUrl,
      // Local OpenAI-compatible servers accept any key; the SDK insists on one.
      apiKey: settings.apiKey ?? defaults.apiKey ?? 'unused',
      model: settings.model ?? DEFAULT_OPENAI_MODEL,
      ...(defaults.timeoutMs === undefined ? {} : { timeoutMs: defaults.timeoutMs }),
    });
  }
  return settings.script === undefined || settings.script.length === 0
    ? sharedScripted
    : createScriptedProvider(settings.script);
}
