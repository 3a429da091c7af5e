import { resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureHelm } from '../src/index.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the pinned helm binary. */
    helm: string;
  }
}

/** Installs the pinned helm once for the whole deploy project (files run in parallel). */
export default async function setup(project: TestProject): Promise<void> {
  project.provide('helm', await ensureHelm(resolve(import.meta.dirname, '..', '..')));
}
