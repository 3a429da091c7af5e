/**
 * The wire contract's semver triple. Versioned independently of the build:
 * adding methods, events, fields or capabilities does not bump it.
 */
export const PROTOCOL_VERSION = '0.1.0';

/** Parses a semver triple into its numeric components; `undefined` when malformed. */
export function parseSemver(version: string): { major: number; minor: number; patch: number } | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) };
}

/**
 * Same major means compatible (Versioning rule 2). Compares the major
 * component numerically, never the string ("10.0.0" is not "1.0.0").
 */
export function isCompatibleVersion(serverVersion: string, clientVersion: string = PROTOCOL_VERSION): boolean {
  const server = parseSemver(serverVersion);
  const client = parseSemver(clientVersion);
  return server !== undefined && client !== undefined && server.major === client.major;
}

/**
 * Structured deprecation notices (Versioning rule 3). Empty at 0.1.0.
 */
export interface DeprecationNotice {
  /** The retired element: a method, event type, member or capability. */
  readonly element: string;
  readonly deprecatedIn: string;
  readonly removedIn: string;
  readonly migration: string;
}

/** The deprecation registry; empty at protocol 0.1.0. */
export const DEPRECATIONS: readonly DeprecationNotice[] = [];
