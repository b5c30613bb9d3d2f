import { existsSync } from 'node:fs';

// When `blueline` runs from the compiled server build (out/server/cli.js, scripts/build-server.mjs)
// rather than from the TypeScript source through tsx, the worker pool must start the compiled
// worker beside it: the pool's default is the .ts source, which a compiled run cannot load.

/** out/server/worker-entry.js when this module runs bundled into out/server/cli.js, else undefined. */
export function bundledWorkerUrl(moduleUrl: string = import.meta.url): URL | undefined {
  if (!moduleUrl.endsWith('.js') && !moduleUrl.endsWith('.mjs')) return undefined;
  const url = new URL('./worker-entry.js', moduleUrl);
  return existsSync(url) ? url : undefined;
}
