import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { Id, Job, Ref } from '../../contract/schemas';
import { creditState } from '../../store/repositories/credits.repository';
import { orgOf, type HttpDeps } from '../deps';
import type { ListEndpoint } from '../list-engine';
import { addRoute } from '../router';
import { listRoute } from './resource-reads';

// Credits of the caller's organization (contract §7). `balance` is what can be spent now,
// `reserved` what running jobs hold; the ledger lists grants (+) and charges (−), so the sum of
// all ledger amounts equals balance + reserved.

export const CreditsObject = Type.Object(
  {
    balance: Type.Integer({ description: 'credits available to start new Vision work' }),
    reserved: Type.Integer({
      description: 'credits held by jobs that are still running (settled when they end)',
    }),
  },
  { $id: 'Credits' },
);

export const LedgerEntry = Type.Object(
  {
    id: Id('led'),
    amount: Type.Integer({ description: 'positive: granted; negative: charged' }),
    reason: Type.String({ description: 'grant, or the job type charged (compare, analyze, …)' }),
    job_id: Type.Union([Id('job'), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    job: Type.Optional(
      Type.Union([Ref(Job), Type.Null()], {
        description: 'Present with ?expand=job: the job charged, null for a grant',
      }),
    ),
  },
  { $id: 'LedgerEntry' },
);

export const LEDGER_ENDPOINT: ListEndpoint = {
  path: '/v1/credits/ledger',
  kind: 'ledger',
  filters: { job_id: { type: 'id', column: 'job_id', prefix: 'job' } },
};

export function creditsRoutes(app: FastifyInstance, deps: HttpDeps): void {
  addRoute(app, {
    operationId: 'getCredits',
    method: 'GET',
    url: '/v1/credits',
    summary: 'Credits of the organization: balance (available) and reserved (held by running jobs)',
    tags: ['credits'],
    area: 'vision',
    responses: { 200: CreditsObject },
    handler: async (request) => await creditState(deps.db, orgOf(request)),
  });
  listRoute(app, deps, LEDGER_ENDPOINT, LedgerEntry, 'credits', 'listCreditLedger');
}
