/**
 * The signing algorithms a connection token may use: asymmetric RSA and
 * ECDSA only. Symmetric `HS*` and the unsecured `none` are never accepted,
 * whatever the configuration says.
 */
export const SIGNING_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512'] as const;

/** One algorithm of {@link SIGNING_ALGORITHMS}. */
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

/** True when `alg` is one of the six asymmetric algorithms the service supports. */
export function isSigningAlgorithm(alg: unknown): alg is SigningAlgorithm {
  return typeof alg === 'string' && (SIGNING_ALGORITHMS as readonly string[]).includes(alg);
}

/**
 * Validates a configured allowlist (the runtime's `jwt_algorithms`): it must
 * be a non-empty subset of {@link SIGNING_ALGORITHMS}. A misconfiguration is a
 * boot error, not a request error, so this throws a plain `Error`.
 *
 * @param configured - the configured list; `undefined` means all six.
 * @returns the allowlist as a set, duplicates collapsed.
 */
export function resolveAlgorithmAllowlist(configured?: readonly string[]): ReadonlySet<SigningAlgorithm> {
  if (configured === undefined) return new Set(SIGNING_ALGORITHMS);
  if (configured.length === 0) throw new Error('jwt algorithms: the allowlist must not be empty');
  const allowed = new Set<SigningAlgorithm>();
  for (const alg of configured) {
    if (!isSigningAlgorithm(alg)) {
      throw new Error(`jwt algorithms: ${alg} is not one of ${SIGNING_ALGORITHMS.join(', ')}`);
    }
    allowed.add(alg);
  }
  return allowed;
}
