// electron-vite: builds the Electron main process, the preload and the renderer into out/.
// `npx electron-vite build` needs only the electron *package* (for its version), not its
// binary, so it runs on CI; `electron-vite dev`/`preview` need the binary.
//
//   out/main/index.js      ESM main process (bundles core/ from source; npm dependencies stay
//                          external and load from node_modules / app.asar)
//   out/preload/index.cjs  CommonJS: a sandboxed preload cannot be an ES module
//   out/renderer/          the React UI, served to the window by the embedded service
import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';

const root = import.meta.dirname;

export default defineConfig({
  main: {
    build: {
      rolldownOptions: {
        input: {
          index: resolve(root, 'electron/main/index.ts'),
          // core's worker-pool thread, as its own file: a bundled main cannot start the .ts
          // source. The main process hands out/main/worker-entry.js to createService.
          'worker-entry': resolve(root, 'core/jobs/worker-entry.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      rolldownOptions: {
        input: { index: resolve(root, 'electron/preload/index.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    // Same settings as renderer/vite.config.ts (the browser-mode build to out/web), but emitted
    // to electron-vite's default out/renderer (or <--outDir>/renderer) for the desktop app.
    // Relative asset URLs work from the service's root.
    root: resolve(root, 'renderer'),
    base: './',
    plugins: [react()],
    build: {
      // electron-vite leaves minification off by default; the bundle is loaded on every start.
      minify: true,
      chunkSizeWarningLimit: 1200,
      rolldownOptions: {
        input: { index: resolve(root, 'renderer/index.html') },
      },
    },
  },
});
