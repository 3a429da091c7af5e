import type { z } from 'zod';

/**
 * Names the first failing path of a zod error, e.g. `identity.tenant:
 * Invalid input: …`; an unknown member reads `path.member: unknown member`.
 * What an `invalid_request` message says about a body, and nothing more.
 */
export function describeFirstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid request body';
  if (issue.code === 'unrecognized_keys') {
    const path = [...issue.path, issue.keys[0] ?? ''].map(String).join('.');
    return `${path}: unknown member`;
  }
  const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(body)';
  return `${path}: ${issue.message}`;
}
