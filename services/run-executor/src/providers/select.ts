import { createOpenAiProvider } from './openai.ts';
import type { LlmProvider, ProviderSettings } from './provider.ts';
import { createScriptedProvider, SCRIPTED_MODEL } from './scripted.ts';
import type { LlmParameters } from './provider.ts';

/** The model an openai installation uses when neither the provider nor `llm_params` names one. */
export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';

/** Executor-wide provider defaults. */
export interface ProviderDefaults {
  /** Key for openai installations whose configuration carries none. */
  readonly apiKey?: string | undefined;
  /** Timeout of openai calls, in ms: the headers, then each wait of the streamed body (see `OpenAiSettings`). */
  readonly timeoutMs?: number | undefined;
}

const sharedScripted = createScriptedProvider();

/** The installation name governance knows a provider by (keys, failover chains): its name, else its kind. */
export function providerName(settings: ProviderSettings): string {
  return settings.name ?? settings.kind;
}

/** The model a call asks for: the run's `llm_params.model`, else the provider's, else the kind's default. */
export function modelOf(settings: ProviderSettings, params: LlmParameters): string {
  return params.model ?? settings.model ?? (settings.kind === 'openai' ? DEFAULT_OPENAI_MODEL : SCRIPTED_MODEL);
}

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
