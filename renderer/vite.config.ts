import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The renderer is one static bundle used twice: loaded by Electron's window and served by
// `blueline serve --web-root out/web` in browser mode. Relative asset paths (`base: './'`)
// make it work from file://, from the service's root, and from any sub-path.
const root = fileURLToPath(new URL('.', import.meta.url));

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
  server: { port: 5173, strictPort: false },
});
