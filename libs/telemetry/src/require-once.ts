import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/**
 * A module loaded by the first call of the returned function, then kept: the
 * OTLP exporters and their protobuf code (about 30 ms and 5 MB resident) are
 * loaded only by a process that exports to a collector. Synchronous, so
 * that setting up telemetry stays so: the OpenTelemetry packages are
 * CommonJS, and `require` gives the same instance an `import` does.
 */
export function requireOnce<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load(specifier) as T);
}
