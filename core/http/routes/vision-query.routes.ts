import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { BBox, DISCIPLINES, Id, listOf, Ref } from '../../contract/schemas';
import type { Logger } from '../../services/context';
import { askProject, llmConfigFromEnv, type LlmConfig } from '../../services/ask.service';
import {
  DEFAULT_SEARCH_LIMIT,
  HIT_TYPES,
  MAX_SEARCH_LIMIT,
  searchProject,
  type HitType,
} from '../../services/search.service';
import { orgOf, type HttpDeps } from '../deps';
import { addRoute } from '../router';
import { IdParams, idParamsDoc } from './resource-reads';

// Search and ask over a project's records (contract §7, Vision area: rate-limited separately).
// Both are synchronous; search costs nothing, ask costs 1 credit when the records answer it.

export const SearchRequestBody = Type.Object(
  {
    query: Type.String({
      minLength: 1,
      maxLength: 500,
      description:
        'Words, "quoted phrases" and sheet numbers. Plain text: quotes group words; every other character only separates words (no query operators). ' +
        'A sheet-number-like word is a prefix and matches with or without its separator ("A-10" finds A-101, "S-101" finds S101); the last word is a prefix.',
    }),
    discipline: Type.Optional(
      Type.Union(
        DISCIPLINES.map((d) => Type.Literal(d)),
        { description: 'only sheets of this discipline' },
      ),
    ),
    drawing_id: Type.Optional(Type.String({ ...Id('drw'), maxLength: 100 })),
    types: Type.Optional(
      Type.Array(Type.Union(HIT_TYPES.map((t) => Type.Literal(t))), {
        minItems: 1,
        uniqueItems: true,
        description: 'which kinds of record to search (default: all)',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_SEARCH_LIMIT, default: DEFAULT_SEARCH_LIMIT }),
    ),
  },
  { additionalProperties: false },
);

export const SearchHitSchema = Type.Object(
  {
    type: Type.Union(
      HIT_TYPES.map((t) => Type.Literal(t)),
      {
        description:
          'sheet (number or title), block (view title or type), text (a text run printed on the sheet), change (description, text before/after, note), symbol (label)',
      },
    ),
    id: Type.String({
      description:
        'the sheet, block, change or symbol id; for a text run, the sheet it is printed on',
    }),
    sheet_id: Id('sht'),
    sheet_number: Type.Union([Type.String(), Type.Null()]),
    drawing_id: Id('drw'),
    snippet: Type.String({ description: 'plain text around the match (no markup)' }),
    highlights: Type.Array(Type.Object({ start: Type.Integer(), end: Type.Integer() }), {
      description: 'matched ranges in `snippet`, [start, end) in UTF-16 code units',
    }),
    bbox: Type.Union([Ref(BBox), Type.Null()], {
      description:
        'where to highlight, in sheet pixels (origin top-left); null for a whole-sheet hit. A change is drawn on its older sheet (the overlay frame).',
    }),
    score: Type.Number({
      description:
        'higher is better: exact sheet number 6+, number prefix 5+, sheet title 4+, block 3+, change 2.5+, symbol 2+, text 1+ (the fraction is bm25 relevance)',
    }),
    overlay_id: Type.Optional(Id('ovl', 'change hits: the overlay the region belongs to')),
    source: Type.Optional(
      Type.Literal('markup', {
        description:
          "text hits: the text of a PDF markup annotation (a callout, a cloud's comment) rather than the drawing's own text; its bbox is the annotation's",
      }),
    ),
    drawing_name: Type.String({ description: 'the issue the hit is in: its drawing set name' }),
    revision: Type.Union([Type.String(), Type.Null()], {
      description: "the issue's revision label, null when none is known",
    }),
    issued_at: Type.Union([Type.String({ format: 'date' }), Type.Null()], {
      description: "the issue's date (YYYY-MM-DD), null when none is known",
    }),
  },
  { $id: 'SearchHit' },
);

export const AskRequestBody = Type.Object(
  { question: Type.String({ minLength: 1, maxLength: 2000, pattern: '\\S' }) },
  { additionalProperties: false },
);

export const AskResponse = Type.Object(
  {
    answer: Type.String({ description: 'every claim carries a citation [n] = sources[n-1]' }),
    sources: Type.Array(
      Type.Object({
        type: Type.Union(
          ['drawing', 'sheet', 'block', 'text', 'change', 'symbol', 'overlay'].map((t) =>
            Type.Literal(t),
          ),
        ),
        id: Type.String(),
        label: Type.String(),
        snippet: Type.String(),
      }),
    ),
    method: Type.Union(
      [Type.Literal('extractive'), Type.Literal('llm'), Type.Literal('extractive_fallback')],
      {
        description:
          'extractive: assembled from the records; llm: written by the configured provider from the records; extractive_fallback: the provider failed',
      },
    ),
    answered: Type.Boolean({
      description: 'false when the records do not answer the question (then nothing is charged)',
    }),
    fallback_reason: Type.Optional(Type.String()),
  },
  { $id: 'AskAnswer' },
);

export interface VisionQueryOptions {
  /** OpenAI-compatible provider for /ask; default from BLUELINE_LLM_URL / _KEY / _MODEL. */
  llm?: LlmConfig;
  log?: Logger;
}

export function visionQueryRoutes(
  app: FastifyInstance,
  deps: HttpDeps,
  opts: VisionQueryOptions = {},
): void {
  const llm = opts.llm ?? llmConfigFromEnv(process.env);

  addRoute(app, {
    operationId: 'searchProject',
    method: 'POST',
    url: '/v1/projects/:id/search',
    summary:
      'Search a project: sheet numbers and titles, block titles, sheet text, change descriptions, symbol labels (no credits)',
    tags: ['search'],
    area: 'vision',
    params: IdParams,
    docParams: idParamsDoc('prj'),
    body: SearchRequestBody,
    responses: {
      200: {
        description: 'The hits, best first, in one page (`_meta.next` and `prev` are null)',
        content: { 'application/json': listOf(SearchHitSchema) },
      },
    },
    handler: async (request) => {
      const { id } = request.params as { id: string };
      const body = request.body as {
        query: string;
        discipline?: string;
        drawing_id?: string;
        types?: HitType[];
        limit?: number;
      };
      const limit = body.limit ?? DEFAULT_SEARCH_LIMIT;
      const { hits } = await searchProject(deps.db, orgOf(request), id, { ...body, limit });
      // One page: the hits are ranked, not listed by creation, so there is no cursor.
      return { data: hits, _meta: { next: null, prev: null, limit } };
    },
  });

  addRoute(app, {
    operationId: 'askProject',
    method: 'POST',
    url: '/v1/projects/:id/ask',
    summary:
      'Ask a question answered only from the project’s records, with citations (1 credit when answered)',
    tags: ['search'],
    area: 'vision',
    params: IdParams,
    docParams: idParamsDoc('prj'),
    body: AskRequestBody,
    responses: { 200: AskResponse },
    problems: ['insufficient_credits'],
    handler: async (request) => {
      const { id } = request.params as { id: string };
      const { question } = request.body as { question: string };
      return askProject(deps.db, orgOf(request), id, question, {
        ...(llm ? { llm } : {}),
        ...(opts.log ? { log: opts.log } : {}),
      });
    },
  });
}
