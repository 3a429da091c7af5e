import type { PageModule } from './page-props.ts';

/**
 * Every page of the console: each module of `./pages/*.tsx` exports `page`
 * (its ConsolePage) and a default component taking PageProps. Adding a page
 * is adding a file.
 */
const modules = import.meta.glob<PageModule>('./pages/*.tsx', { eager: true });

export const PAGES: readonly PageModule[] = Object.entries(modules)
  .filter(([file, module]) => {
    const ok = typeof module.page?.path === 'string' && typeof module.default === 'function';
    if (!ok) throw new Error(`${file} must export \`page\` and a default component`);
    return ok;
  })
  .map(([, module]) => module);

/** Pages listed in the navigation, in order. */
export function navPages(pages: readonly PageModule[]): PageModule[] {
  return pages
    .filter((m) => m.page.nav === true)
    .sort((a, b) => (a.page.order ?? 100) - (b.page.order ?? 100) || a.page.title.localeCompare(b.page.title));
}
