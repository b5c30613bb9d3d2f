import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  FILE_CONTENT_TYPES,
  FileCreate,
  FileObject,
  GENERATED_FILE_CONTENT_TYPES,
} from '../../contract/schemas';
import { ApiError, notFound } from '../../domain/errors';
import { idKind } from '../../domain/ids';
import { ObjectStoreUnavailableError, type ObjectStore } from '../../blobs/object-store';
import { fileKey } from '../../blobs/keys';
import { serveObject } from '../../blobs/serve';
import { UPLOAD_URL_TTL_SECONDS, type UrlSigner } from '../../blobs/signed-url';
import { fetchPage, getRow, pageLinks, type PageKey } from '../../store/list-query';
import { getFileById, insertFile, markUploaded } from '../../store/repositories/files.repository';
import { deleteRecord, drawingsUsingFile } from '../../store/repositories/records.repository';
import type { Row } from '../../store/repositories/row';
import { RESOURCES } from '../../services/resources';
import { urgencyOf, type TileService } from '../../services/tiles.service';
import { parseLimit, DEFAULT_LIMIT } from '../list-engine';
import { orgOf, requestOrigin, serializeContext, type HttpDeps } from '../deps';
import { addRoute, openapiOperation } from '../router';
import { created, DELETED, documentOperation, type ResponseDoc } from '../openapi';
import { Id, listOf } from '../../contract/schemas';
import { IdParams, idParamsDoc, loadOwned, PagingQueryDoc, serializeOne } from './resource-reads';

// Files (contract §4 File, §5 signed URLs): create → signed PUT of the raw bytes → uploaded.
// GET /files pages over the project's `files` rows (keyset on created_at, id: the order of the
// object keys, newest first), in the same signed cursor and envelope as every other list. It once
// paged the object store's own listing (spec pagination rule 6); the rows are the record of what
// is stored on every engine and object store, and S3 lists forward only.

// Listing filters by every type a file may have: uploads and the exports the service wrote.
const CONTENT_TYPES: readonly string[] = [...FILE_CONTENT_TYPES, ...GENERATED_FILE_CONTENT_TYPES];

const FileCreated = Type.Object(
  {
    ...FileObject.properties,
    upload_url: Type.String({
      description:
        'Signed URL to PUT the raw bytes to (no Authorization header), with Content-Type = content_type',
    }),
    upload_expires_at: Type.String({ format: 'date-time', description: '15 minutes from now' }),
  },
  { $id: 'FileCreated' },
);

const BLOB_DESCRIPTION =
  'Signed with HMAC-SHA256 over path and expiry, valid 1 hour (the expiry is rounded up to the next 5-minute mark, so a URL lasts 60–65 minutes and a blob keeps the same URL across list refetches, which lets clients cache it), no Authorization header needed. ' +
  'Served with ETag, Cache-Control: private, max-age=3600, immutable, and Range support; altered or expired → 403 invalid_signature. ' +
  'Images (sheet, block crop, overlay) also serve a tile pyramid at `<uri path>/tiles/{z}/{x}/{y}.webp?<the same query>`, ' +
  'described by `<uri path>/tiles.json?<the same query>` = {tile_size, width, height, native_zoom, max_zoom}: ' +
  'tiles are 512 px square (edge tiles smaller); level z shows the image scaled by 2^(z − native_zoom), where ' +
  'native_zoom = ceil(log2(max(width, height) / 512)) is the stored image’s own resolution and level 0 fits in one tile. ' +
  'Images of vector PDF pages (sheets, their blocks, overlays of them) go 4 levels deeper (max_zoom = native_zoom + 4, 16x): ' +
  'those tiles are rendered from the PDF pages themselves on first request (sheets and blocks in colour; an overlay’s from both ' +
  'revisions rendered at that scale and compared through the pair’s transform), so they are sharp, never enlarged pixels. ' +
  'Images of scans stop at native_zoom (max_zoom = native_zoom). Stored tiles are a cache bounded on disk: any tile may be rendered again.';

const TilesJsonBody = Type.Object(
  {
    tile_size: Type.Integer({ description: 'tile edge, px (512); edge tiles are smaller' }),
    width: Type.Integer({ description: 'the stored image’s width, px' }),
    height: Type.Integer({ description: 'the stored image’s height, px' }),
    native_zoom: Type.Integer({
      description:
        'the level at the stored image’s own resolution; level z is scaled 2^(z − native_zoom)',
    }),
    max_zoom: Type.Integer({
      description:
        'the deepest level: native_zoom + 4 for images of vector PDF pages, native_zoom for scans',
    }),
  },
  { $id: 'TilesJson' },
);

const BlobKeyParams = Type.Object({
  key: Type.String({
    description:
      'The object key: the rest of the path of a *_uri, slashes included. Follow the URI as given rather than building it.',
  }),
});

const PaletteQuery = Type.Object({
  palette: Type.Optional(
    Type.Union([Type.Literal('standard'), Type.Literal('colorblind')], {
      description:
        'Overlay images: colorblind selects the colour-blind-safe rendering (not covered by the signature)',
    }),
  ),
});

/** A signed download: the bytes (whole or one range), or only the headers for HEAD. */
function blobResponses(method: 'GET' | 'HEAD', media: string): Record<number, ResponseDoc> {
  const headers = {
    ETag: Type.String({ description: 'strong, from the SHA-256 of the bytes' }),
    'Cache-Control': Type.String({ description: 'private, max-age=3600, immutable' }),
  };
  const bytes = (description: string) =>
    method === 'GET'
      ? { description, content: { [media]: Type.String({ format: 'binary' }) }, headers }
      : { description: `${description} (headers only)`, headers };
  return {
    200: bytes('The bytes, with their Content-Type'),
    206: bytes('One byte range (Range: bytes=a-b), with Content-Range'),
    304: { description: 'Not modified (If-None-Match or If-Modified-Since)', headers },
    416: { description: 'The range starts at or beyond the end; Content-Range: bytes */<size>' },
  };
}

export function filesRoutes(
  app: FastifyInstance,
  deps: HttpDeps,
  env: { objects: ObjectStore; signer: UrlSigner; maxUploadBytes: number; tiles: TileService },
): void {
  const { objects, signer } = env;

  addRoute(app, {
    operationId: 'createFile',
    method: 'POST',
    url: '/v1/files',
    summary:
      'Create a file and get a signed upload URL (PUT the raw bytes there within 15 minutes)',
    tags: ['files'],
    body: FileCreate,
    responses: { 201: created('The pending file with its upload URL', FileCreated) },
    // not_found: the project; payload_too_large: size_bytes over the upload limit.
    problems: ['not_found'],
    handler: async (request, reply) => {
      const org = orgOf(request);
      const body = request.body as {
        project_id: string;
        filename: string;
        content_type: string;
        size_bytes?: number;
      };
      if (!(await getRow(deps.db, 'projects', org, body.project_id))) {
        throw notFound('project', body.project_id);
      }
      if (body.size_bytes !== undefined && body.size_bytes > env.maxUploadBytes) {
        throw new ApiError(
          'payload_too_large',
          `size_bytes ${body.size_bytes} is over the upload limit of ${env.maxUploadBytes} bytes.`,
        );
      }
      const row = await insertFile(deps.db, {
        organizationId: org,
        projectId: body.project_id,
        filename: body.filename,
        contentType: body.content_type,
        declaredSize: body.size_bytes ?? null,
        objectKey: (createdAt, id) => fileKey(body.project_id, createdAt, id),
      });
      const signed = signer.sign(`/v1/uploads/${row.id}`, UPLOAD_URL_TTL_SECONDS, {
        method: 'PUT',
      });
      reply.code(201).header('location', `/v1/files/${row.id}`);
      return {
        ...(await serializeOne(deps, request, 'file', row)),
        upload_url: requestOrigin(request) + signed.url,
        upload_expires_at: signed.expiresAt,
      };
    },
  });

  addRoute(app, {
    operationId: 'uploadFileContent',
    method: 'PUT',
    url: '/v1/uploads/:id',
    summary: 'Upload the raw bytes of a file to its signed upload URL (no Authorization header)',
    description:
      'Send the bytes with Content-Type set to the type declared when the file was created. They are checked against that type by their magic number (415 if not) and against size_bytes when it was given; the limit is the upload size limit (1 GiB by default).',
    tags: ['files'],
    signed: true,
    rawBody: FILE_CONTENT_TYPES,
    params: IdParams,
    docParams: idParamsDoc('fil'),
    responses: { 200: FileObject },
    // conflict: the bytes already arrived; validation_error: no body.
    problems: ['conflict', 'validation_error'],
    handler: async (request) => {
      const { id } = request.params as { id: string };
      const path = (request.raw.url ?? '').split('?')[0]!;
      signer.assertValid(path, request.query as Record<string, unknown>, Date.now(), 'PUT');
      const row = await getFileById(deps.db, id);
      if (!row) throw new ApiError('not_found', `No file with id '${id}' exists.`);
      if (row.status === 'uploaded')
        throw new ApiError(
          'conflict',
          `File ${id} already has its bytes; create a new file to upload again.`,
        );
      const declared = String(row.content_type);
      const sent = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (sent !== declared) {
        throw new ApiError(
          'unsupported_media_type',
          `Send the bytes with Content-Type: ${declared}, the type declared for this file; got '${sent || 'none'}'.`,
        );
      }
      const length = Number(request.headers['content-length']);
      if (Number.isFinite(length) && length > env.maxUploadBytes) {
        throw new ApiError(
          'payload_too_large',
          `The upload is ${length} bytes; the limit is ${env.maxUploadBytes} bytes.`,
        );
      }
      const body = request.body;
      if (!(body instanceof Readable))
        throw new ApiError('validation_error', 'The upload has no body.');
      let stored;
      try {
        stored = await objects.put(String(row.object_key), body, {
          contentType: declared,
          maxBytes: env.maxUploadBytes,
          ...(typeof row.declared_size === 'number' ? { expectedSize: row.declared_size } : {}),
          checkMagic: true,
        });
      } catch (err) {
        // The store stops reading at the first bad chunk (wrong magic number, over the limit or
        // size_bytes). Drain the rest, else the connection stalls and the client, still sending,
        // never reads the Problem Details answer (it saw ECONNRESET after the keep-alive timeout).
        body.resume();
        throw err;
      }
      const updated = await markUploaded(deps.db, id, stored.size, stored.sha256);
      const ctx = serializeContext(deps, request);
      return RESOURCES.file.toApi(updated, ctx);
    },
  });

  addRoute(app, {
    operationId: 'listFiles',
    method: 'GET',
    url: '/v1/files',
    summary: "List a project's stored files, newest first",
    description:
      'Only files whose bytes are stored; a pending file is reachable by GET /v1/files/{id}.',
    tags: ['files'],
    querystring: Type.Object({
      project_id: Type.Optional(Type.String()),
      content_type: Type.Optional(Type.String()),
      limit: Type.Optional(Type.String()),
      cursor: Type.Optional(Type.String()),
    }),
    docQuery: Type.Object({
      project_id: Id('prj', 'the project (required unless a cursor is given)'),
      content_type: Type.Optional(
        Type.Union(
          FILE_CONTENT_TYPES.map((t) => Type.Literal(t)),
          { description: 'filter: MIME type' },
        ),
      ),
      limit: PagingQueryDoc.limit,
      cursor: PagingQueryDoc.cursor,
    }),
    responses: { 200: listOf(FileObject) },
    problems: ['missing_parameter', 'invalid_cursor', 'not_found'],
    handler: async (request) => {
      const org = orgOf(request);
      const q = request.query as Record<string, string | undefined>;
      const endpoint = '/v1/files';
      let filters: Record<string, string> = {};
      for (const name of ['project_id', 'content_type'])
        if (q[name] !== undefined) filters[name] = q[name]!;
      let key: PageKey | null = null;
      let direction: 'after' | 'before' = 'after';
      let remembered = DEFAULT_LIMIT;
      if (q.cursor !== undefined) {
        const c = deps.cursors.decode(q.cursor, endpoint, org);
        for (const [k, v] of Object.entries(filters)) {
          if (c.f[k] !== v)
            throw new ApiError(
              'invalid_cursor',
              `The filter '${k}' given beside the cursor differs from the one the cursor was created with.`,
            );
        }
        // Cursors of the object-store listing (before the list read the database) hold no row.
        if (!c.k[0] || !c.k[1])
          throw new ApiError(
            'invalid_cursor',
            'The cursor was issued by an older version of this list; start again from the first page.',
          );
        filters = c.f;
        key = { created_at: c.k[0], id: c.k[1] };
        direction = c.d === 'b' ? 'before' : 'after';
        remembered = c.l;
      }
      const projectId = filters.project_id;
      if (projectId === undefined)
        throw new ApiError(
          'missing_parameter',
          "The query parameter 'project_id' is required on /v1/files.",
        );
      if (idKind(projectId) !== 'project')
        throw new ApiError(
          'invalid_parameter',
          "The query parameter 'project_id' must be an id starting with 'prj_'.",
        );
      const contentType = filters.content_type;
      if (contentType !== undefined && !CONTENT_TYPES.includes(contentType)) {
        throw new ApiError(
          'invalid_parameter',
          `The query parameter 'content_type' must be one of ${CONTENT_TYPES.join(', ')}.`,
        );
      }
      const limit = parseLimit(q.limit, remembered);
      const ctx = serializeContext(deps, request);
      if (!(await getRow(deps.db, 'projects', org, projectId)))
        throw notFound('project', projectId);

      // Keyset paging over the project's `files` rows whose bytes are stored (status uploaded),
      // newest first: the same query on SQLite and PostgreSQL, one indexed range read per page,
      // whichever object store holds the bytes (S3 lists forward only).
      const base = {
        table: 'files',
        organizationId: org,
        conditions: [
          { sql: 'project_id = ?', params: [projectId] },
          { sql: "status = 'uploaded'", params: [] },
          ...(contentType !== undefined
            ? [{ sql: 'content_type = ?', params: [contentType] }]
            : []),
        ],
      };
      const page = await fetchPage<Row & PageKey>(deps.db, { ...base, limit, direction, key });
      const make = (row: PageKey, d: 'a' | 'b') =>
        deps.cursors.encode({
          e: endpoint,
          o: org,
          f: filters,
          l: limit,
          k: [row.created_at, row.id],
          d,
        });
      const { next, prev } = await pageLinks(deps.db, { ...base, direction, key }, page, make);
      return {
        data: page.rows.map((r) => RESOURCES.file.toApi(r, ctx)),
        _meta: { next, prev, limit },
      };
    },
  });

  addRoute(app, {
    operationId: 'getFile',
    method: 'GET',
    url: '/v1/files/:id',
    summary: 'Get one file (pending files too)',
    tags: ['files'],
    params: IdParams,
    docParams: idParamsDoc('fil'),
    docQuery: Type.Object({
      expand: Type.Optional(Type.String({ description: 'project: inline the project' })),
    }),
    responses: { 200: FileObject },
    problems: ['invalid_expand', 'expand_too_deep'],
    handler: async (request) => {
      const { id } = request.params as { id: string };
      return await serializeOne(deps, request, 'file', await loadOwned(deps, request, 'file', id));
    },
  });

  addRoute(app, {
    operationId: 'deleteFile',
    method: 'DELETE',
    url: '/v1/files/:id',
    summary: 'Delete a file (409 while a drawing uses it)',
    tags: ['files'],
    params: IdParams,
    docParams: idParamsDoc('fil'),
    responses: { 204: DELETED },
    problems: ['conflict'],
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      const org = orgOf(request);
      const row = await loadOwned(deps, request, 'file', id);
      const users = await drawingsUsingFile(deps.db, org, id);
      if (users.length > 0)
        throw new ApiError(
          'conflict',
          `File ${id} is used by drawing ${users.join(', ')}; delete the drawing first.`,
        );
      await deleteRecord(deps.db, 'files', org, id);
      await objects.delete(String(row.object_key));
      return reply.code(204).send();
    },
  });

  // Signed downloads of every stored object (sheet images, crops, overlays, file bytes), and the
  // deep-zoom tiles of images: `<uri path>/tiles/{z}/{x}/{y}.webp` with the image URL's own
  // signature (one signed URL covers its pyramid). One wildcard route serves both shapes; the
  // document names them separately.
  const serveBlob = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = (request.raw.url ?? '').split('?')[0]!;
    const tile = /^(\/v1\/blobs\/.+?)\/tiles\/(\d{1,5})\/(\d{1,6})\/(\d{1,6})\.webp$/.exec(path);
    const described = tile ? null : /^(\/v1\/blobs\/.+?)\/tiles\.json$/.exec(path);
    const signedPath = tile ? tile[1]! : described ? described[1]! : path;
    signer.assertValid(signedPath, request.query as Record<string, unknown>, Date.now(), 'GET');
    let key = signedPath.slice('/v1/blobs/'.length);
    // Overlays: `?palette=colorblind` selects the colour-blind-safe rendering of the combined
    // image (stored beside it); the signature covers the image, not the palette choice.
    const palette = (request.query as Record<string, unknown>).palette;
    if (palette !== undefined && palette !== 'standard') {
      if (palette !== 'colorblind')
        throw new ApiError(
          'invalid_parameter',
          "The query parameter 'palette' must be standard or colorblind.",
        );
      if (/\/overlays\/ovl_[0-9A-Za-z]+\/combined\.png$/.test(key))
        key = key.replace(/combined\.png$/, 'combined-colorblind.png');
    }
    if ((tile || described) && !/\.(png|webp|jpg)$/.test(key))
      throw new ApiError('not_found', 'Only images have tiles.');
    if (described) {
      const body = JSON.stringify(await env.tiles.tilesJson(key));
      const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;
      reply.headers({
        'Content-Type': 'application/json; charset=utf-8',
        ETag: etag,
        'Cache-Control': 'private, max-age=3600, immutable',
      });
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.code(200).send(request.method === 'HEAD' ? '' : body);
    }
    if (tile) {
      if (env.tiles.traced) {
        const at = Date.now();
        const z = Number(tile[2]);
        // Only an answer that was sent: an HTTP/2 stream reset by the client emits 'finish' too.
        const priority = request.headers.priority;
        reply.raw.once('finish', () => {
          if (reply.raw.writableEnded)
            env.tiles.traceServed(
              key,
              z,
              at,
              reply.raw.statusCode,
              Array.isArray(priority) ? priority.join(', ') : priority,
            );
        });
      }
      // A client that no longer wants the tile cancels its request (the HTTP/1.1 connection
      // closes, or the HTTP/2 stream is reset, before the answer): the tile service then drops
      // the tile's render if it is still queued in the pool, and nothing is sent.
      const gone = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableEnded) gone.abort(new Error('The client cancelled the request.'));
      };
      reply.raw.once('close', onClose);
      try {
        key = await env.tiles.tileKey(
          key,
          Number(tile[2]),
          Number(tile[3]),
          Number(tile[4]),
          gone.signal,
          // The viewer's urgency (Chromium's RFC 9218 header over HTTP/2: view tiles before its
          // prefetch); it orders renders only, the answer is the same.
          urgencyOf(request.headers.priority),
        );
      } catch (err) {
        if (!gone.signal.aborted) throw err;
        reply.hijack();
        reply.raw.destroy();
        return reply;
      } finally {
        reply.raw.off('close', onClose);
      }
    }
    let obj;
    try {
      // A deep tile just made is served from memory while it is being stored.
      obj = (tile && env.tiles.freshTile(key)) || (await objects.get(key));
    } catch (err) {
      // Storage that cannot answer (S3 down) is a 503, not a missing object.
      if (err instanceof ObjectStoreUnavailableError) throw err;
      obj = null;
    }
    if (!obj) throw new ApiError('not_found', 'The object behind this URL no longer exists.');
    const served = serveObject(obj, { method: request.method, headers: request.headers });
    reply.code(served.status).headers(served.headers);
    return reply.send(served.body ?? '');
  };

  for (const method of ['HEAD', 'GET'] as const) {
    // HEAD first: a GET route registered after its HEAD gets no generated one.
    addRoute(app, {
      operationId: method === 'GET' ? 'downloadBlob' : 'headBlob',
      method,
      url: '/v1/blobs/*',
      docUrl: '/v1/blobs/:key',
      summary:
        method === 'GET'
          ? 'Download a stored object through its signed URL (every *_uri)'
          : 'The headers of a stored object (size, type, ETag) through its signed URL',
      description: BLOB_DESCRIPTION,
      tags: ['files'],
      signed: true,
      docParams: BlobKeyParams,
      docQuery: PaletteQuery,
      responses: blobResponses(method, '*/*'),
      problems: ['not_found', 'invalid_parameter'],
      handler: serveBlob,
    });
  }
  const tileDoc = openapiOperation({
    operationId: 'getBlobTile',
    method: 'GET',
    url: '/v1/blobs/*',
    summary: 'A deep-zoom tile of a stored image, under the image URL’s signature',
    description: BLOB_DESCRIPTION,
    tags: ['files'],
    signed: true,
    docParams: Type.Object({
      ...BlobKeyParams.properties,
      z: Type.Integer({ minimum: 0, description: 'zoom level; 0 fits the image in one tile' }),
      x: Type.Integer({ minimum: 0, description: 'tile column from the left' }),
      y: Type.Integer({ minimum: 0, description: 'tile row from the top' }),
    }),
    docQuery: PaletteQuery,
    responses: blobResponses('GET', 'image/webp'),
    problems: ['not_found', 'invalid_parameter'],
  });
  documentOperation(app, '/v1/blobs/{key}/tiles/{z}/{x}/{y}.webp', 'get', tileDoc);
  const tilesJsonDoc = openapiOperation({
    operationId: 'getBlobTilesJson',
    method: 'GET',
    url: '/v1/blobs/*',
    summary: 'The tile pyramid of a stored image (its levels), under the image URL’s signature',
    description: BLOB_DESCRIPTION,
    tags: ['files'],
    signed: true,
    docParams: BlobKeyParams,
    docQuery: PaletteQuery,
    responses: {
      200: {
        description: 'The pyramid',
        content: { 'application/json': TilesJsonBody },
        headers: {
          ETag: Type.String({ description: 'strong, from the body' }),
          'Cache-Control': Type.String({ description: 'private, max-age=3600, immutable' }),
        },
      },
      304: { description: 'Not modified (If-None-Match)' },
    },
    problems: ['not_found', 'invalid_parameter'],
  });
  documentOperation(app, '/v1/blobs/{key}/tiles.json', 'get', tilesJsonDoc);
}
