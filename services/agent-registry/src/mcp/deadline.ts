/**
 * `promise`, or a rejection after `ms` naming `what`. A value that arrives
 * late and has a `close()` (an opened client) is closed, so nothing leaks.
 */
export async function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } catch (error) {
    promise.then((value) => (value as { close?: () => Promise<void> } | undefined)?.close?.()).catch(() => undefined);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
