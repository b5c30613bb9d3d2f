import { createReadStream, statSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors';

// Browser mode: the built renderer served at `/` on the API's own origin (so the page and the API
// share one origin and one certificate). Unknown paths fall back to index.html (client routing).

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
  "connect-src 'self'; font-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

export function webRoutes(app: FastifyInstance, webRoot: string): void {
  const root = resolve(webRoot);
  app.route({
    method: ['GET', 'HEAD'],
    url: '/*',
    config: { public: true },
    schema: { hide: true } as never,
    exposeHeadRoute: false,
    handler: async (request, reply) => {
      const urlPath = decodeURIComponent((request.raw.url ?? '/').split('?')[0]!);
      if (urlPath.startsWith('/v1/') || urlPath.includes('\0'))
        throw new ApiError(
          'not_found',
          `No route ${request.method} ${urlPath.slice(0, 200)} exists.`,
        );
      let file = normalize(join(root, urlPath));
      if (file !== root && !file.startsWith(root + sep))
        throw new ApiError('not_found', 'No such file.');
      let st = safeStat(file);
      if (!st || st.isDirectory()) {
        // Client-side routes and the root load the app shell; missing assets are real 404s.
        if (extname(urlPath) && !urlPath.endsWith('.html'))
          throw new ApiError('not_found', `No file ${urlPath.slice(0, 200)}.`);
        file = join(root, 'index.html');
        st = safeStat(file);
        if (!st)
          throw new ApiError('not_found', 'The web UI is not built; run `npm run build:web`.');
      }
      const isHtml = file.endsWith('.html');
      reply
        .header('content-type', TYPES[extname(file)] ?? 'application/octet-stream')
        .header('content-length', st.size)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', isHtml ? 'no-cache' : 'public, max-age=31536000, immutable');
      if (isHtml)
        reply
          .header('content-security-policy', CSP)
          .header('referrer-policy', 'no-referrer')
          .header('x-frame-options', 'DENY');
      if (request.method === 'HEAD') return reply.send();
      return reply.send(createReadStream(file));
    },
  });
}

function safeStat(file: string) {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}
