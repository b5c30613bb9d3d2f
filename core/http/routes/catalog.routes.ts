import type { FastifyInstance } from 'fastify';
import {
  Block,
  BLOCK_TYPES,
  BlockPatch,
  Change,
  CHANGE_CATEGORIES,
  CHANGE_KINDS,
  ChangePatch,
  DISCIPLINES,
  Drawing,
  DrawingPatch,
  Job,
  JOB_STATUSES,
  JOB_TYPES,
  Overlay,
  REVIEW_STATUSES,
  Sheet,
  SheetPatch,
  SymbolInstance,
  TARGET_TYPES,
} from '../../contract/schemas';
import type { TSchema } from '@sinclair/typebox';
import {
  patchRecord,
  deleteDrawing,
  deleteOverlay,
  type CatalogEffects,
} from '../../services/catalog.service';
import type { ResourceKind } from '../../services/resources';
import type { ListEndpoint } from '../list-engine';
import { orgOf, type HttpDeps } from '../deps';
import { addRoute } from '../router';
import { DELETED } from '../openapi';
import {
  getOneRoute,
  ID_PREFIX,
  IdParams,
  idParamsDoc,
  listRoute,
  loadOwned,
  serializeOne,
} from './resource-reads';

// Reads, patches and deletes of the records the vision pipeline creates (drawings, sheets, blocks,
// overlays, changes, symbols, jobs). Each list is one declaration for the list engine.

export const LIST_ENDPOINTS: ListEndpoint[] = [
  {
    path: '/v1/drawings',
    kind: 'drawing',
    required: ['project_id'],
    filters: {
      project_id: { type: 'id', column: 'project_id', prefix: 'prj' },
      name: { type: 'substring', column: 'name' },
    },
  },
  {
    path: '/v1/sheets',
    kind: 'sheet',
    filters: {
      drawing_id: { type: 'id', column: 'drawing_id', prefix: 'drw' },
      project_id: { type: 'id', column: 'project_id', prefix: 'prj' },
      discipline: { type: 'enum', column: 'discipline', values: DISCIPLINES },
      sheet_number: { type: 'exact', column: 'sheet_number' },
    },
  },
  {
    path: '/v1/blocks',
    kind: 'block',
    filters: {
      sheet_id: { type: 'id', column: 'sheet_id', prefix: 'sht' },
      type: { type: 'enum', column: 'type', values: BLOCK_TYPES },
    },
  },
  {
    path: '/v1/overlays',
    kind: 'overlay',
    filters: {
      project_id: { type: 'id', column: 'project_id', prefix: 'prj' },
      job_id: { type: 'id', column: 'job_id', prefix: 'job' },
      drawing_id: {
        type: 'sql',
        prefix: 'drw',
        sql: 'block_a_id IN (SELECT id FROM blocks WHERE drawing_id = ?) OR block_b_id IN (SELECT id FROM blocks WHERE drawing_id = ?)',
      },
      has_changes: { type: 'bool', column: 'has_changes' },
    },
  },
  {
    path: '/v1/changes',
    kind: 'change',
    filters: {
      overlay_id: { type: 'id', column: 'overlay_id', prefix: 'ovl' },
      project_id: { type: 'id', column: 'project_id', prefix: 'prj' },
      kind: { type: 'enum', column: 'kind', values: CHANGE_KINDS },
      category: { type: 'enum', column: 'category', values: CHANGE_CATEGORIES },
      review_status: { type: 'enum', column: 'review_status', values: REVIEW_STATUSES },
    },
  },
  {
    path: '/v1/symbols',
    kind: 'symbol',
    filters: {
      project_id: { type: 'id', column: 'project_id', prefix: 'prj' },
      job_id: { type: 'id', column: 'job_id', prefix: 'job' },
      sheet_id: { type: 'id', column: 'sheet_id', prefix: 'sht' },
      block_id: { type: 'id', column: 'block_id', prefix: 'blk' },
      label: { type: 'exact', column: 'label' },
    },
  },
  {
    path: '/v1/jobs',
    kind: 'job',
    filters: {
      project_id: { type: 'id', column: 'project_id', prefix: 'prj' },
      status: { type: 'enum', column: 'status', values: JOB_STATUSES },
      type: { type: 'enum', column: 'type', values: JOB_TYPES },
      target_type: { type: 'enum', column: 'target_type', values: TARGET_TYPES },
      target_id: { type: 'exact', column: 'target_id', maxLength: 100 },
      parent_id: { type: 'id', column: 'parent_id', prefix: 'job' },
    },
  },
];

const ITEM: Partial<Record<ResourceKind, [TSchema, string]>> = {
  drawing: [Drawing, 'drawings'],
  sheet: [Sheet, 'sheets'],
  block: [Block, 'blocks'],
  overlay: [Overlay, 'overlays'],
  change: [Change, 'changes'],
  symbol: [SymbolInstance, 'symbols'],
  job: [Job, 'jobs'],
};

export function catalogRoutes(app: FastifyInstance, deps: HttpDeps, effects: CatalogEffects): void {
  for (const endpoint of LIST_ENDPOINTS) {
    const [item, tag] = ITEM[endpoint.kind]!;
    listRoute(app, deps, endpoint, item, tag);
    getOneRoute(app, deps, endpoint.kind, `${endpoint.path}/:id`, item, tag);
  }

  const patch = (kind: ResourceKind, path: string, body: TSchema, summary: string) => {
    const [item, tag] = ITEM[kind]!;
    addRoute(app, {
      operationId: `update${kind[0]!.toUpperCase()}${kind.slice(1)}`,
      method: 'PATCH',
      url: path,
      summary,
      tags: [tag],
      params: IdParams,
      docParams: idParamsDoc(ID_PREFIX[kind]),
      body,
      responses: { 200: item },
      handler: async (request) => {
        const { id } = request.params as { id: string };
        const row = await loadOwned(deps, request, kind, id);
        const updated = await patchRecord(
          deps.db,
          orgOf(request),
          kind,
          row,
          (request.body ?? {}) as Record<string, unknown>,
        );
        return await serializeOne(deps, request, kind, updated);
      },
    });
  };
  patch('drawing', '/v1/drawings/:id', DrawingPatch, "Update a drawing's name or revision label");
  patch(
    'sheet',
    '/v1/sheets/:id',
    SheetPatch,
    'Correct a sheet (a person’s value wins over extraction and survives re-processing)',
  );
  patch('block', '/v1/blocks/:id', BlockPatch, "Correct a block's type, title or description");
  patch('change', '/v1/changes/:id', ChangePatch, 'Review a change: status and note');

  addRoute(app, {
    operationId: 'deleteDrawing',
    method: 'DELETE',
    url: '/v1/drawings/:id',
    summary: 'Delete a drawing with its sheets, blocks and every overlay involving its blocks',
    tags: ['drawings'],
    params: IdParams,
    docParams: idParamsDoc('drw'),
    responses: { 204: DELETED },
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      const row = await loadOwned(deps, request, 'drawing', id);
      await deleteDrawing(deps.db, effects, orgOf(request), row);
      return reply.code(204).send();
    },
  });

  addRoute(app, {
    operationId: 'deleteOverlay',
    method: 'DELETE',
    url: '/v1/overlays/:id',
    summary: 'Delete an overlay and its changes',
    tags: ['overlays'],
    params: IdParams,
    docParams: idParamsDoc('ovl'),
    responses: { 204: DELETED },
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      const row = await loadOwned(deps, request, 'overlay', id);
      await deleteOverlay(deps.db, effects, orgOf(request), row);
      return reply.code(204).send();
    },
  });
}
