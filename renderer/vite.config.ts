import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The renderer is one static bundle used twice: loaded by Electron's window and served by
// `blueline serve --web-root out/web` in browser mode. Relative asset paths (`base: './'`)
// make it work from file://, from the service's root, and from any sub-path.
const root = fileURLToPath(new URL('.', import.meta.url));

function apiProxy() {
  const target = process.env.BLUELINE_API_ORIGIN;
  if (!target) return undefined;
  return {
    '/v1': { target, secure: false, changeOrigin: true },
    '/problems': { target, secure: false, changeOrigin: true },
  };
}

export default defineConfig({
  root,
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../out/web', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    // Konva + React are one ~600 kB chunk; splitting it buys nothing for a local app.
    chunkSizeWarningLimit: 1200,
  },
  // `BLUELINE_API_ORIGIN=https://127.0.0.1:7420 npx vite --config renderer/vite.config.ts`:
  // develop the UI with hot reload against a running `blueline serve` (its self-signed
  // certificate is accepted for this local proxy only). Sign in with `/#key=sk_…`.
  server: { port: 5173, strictPort: false, proxy: apiProxy() },
  preview: { port: 4173, strictPort: false, proxy: apiProxy() },
});
