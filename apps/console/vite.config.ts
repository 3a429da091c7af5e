import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The console builds to dist/ with every asset under /console/ (where the
 * gateway serves it). JSX goes through esbuild's automatic runtime (no React
 * plugin). `@ars/client` resolves to its browser entry, which has no node:
 * import. `vite` (dev) proxies the API to ARS_GATEWAY_URL.
 */
export default defineConfig({
  base: '/console/',
  root: fileURLToPath(new URL('.', import.meta.url)),
  esbuild: { jsx: 'automatic' },
  resolve: {
    alias: [
      {
        find: /^@ars\/client$/,
        replacement: fileURLToPath(new URL('../../libs/client/src/browser.ts', import.meta.url)),
      },
    ],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    reportCompressedSize: false,
  },
  server: {
    proxy: { '/v1': process.env.ARS_GATEWAY_URL ?? 'http://127.0.0.1:8080' },
  },
});
