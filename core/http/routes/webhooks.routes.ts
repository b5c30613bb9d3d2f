import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { RESOURCES } from '../../services/resources';
import { createWebhook, WEBHOOK_EVENT_TYPES } from '../../services/webhooks.service';
import { deleteWebhook } from '../../store/repositories/webhooks.repository';
import { runListJson, type ListEndpoint } from '../list-engine';
import { orgOf, serializeContext, type HttpDeps } from '../deps';
import { addRoute } from '../router';
import { Id, listOf, Ref } from '../../contract/schemas';
import { created, DELETED } from '../openapi';
import {
  getOneRoute,
  IdParams,
  idParamsDoc,
  listProblems,
  listQueryDoc,
  listRoute,
  loadOwned,
  sendJsonText,
} from './resource-reads';

// Webhook subscriptions and their delivery log (contract §10). The signing secret is returned once,
// by POST; GET never shows it (the resource table's webhook object has no secret field).

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });
const EventType = Type.Union(
  WEBHOOK_EVENT_TYPES.map((t) => Type.Literal(t)),
  {
    description:
      'drawing.ready, drawing.failed, job.completed, job.failed, job.canceled, overlay.created, changes.analyzed',
  },
);

const DELIVERY_DOC =
  'Each event is POSTed as JSON `{id, type, created_at, data}` (`data`: the resource as GET returns it, without signed URLs — ' +
  'for changes.analyzed `{overlay_id, project_id, job_id, change_count, overlay}`) with the headers `Webhook-Id` (the event id, ' +
  'the same on every retry: deduplicate on it), `Webhook-Timestamp` (unix seconds of this attempt) and ' +
  '`Webhook-Signature: v1,<base64 HMAC-SHA256(key, "<Webhook-Id>.<Webhook-Timestamp>.<raw body>")>` where key is the base64-decoded ' +
  'part of the secret after `whsec_` (the Standard Webhooks scheme). A 2xx answer within 10 seconds is a delivery; anything else ' +
  '(redirects are not followed) is retried with exponential backoff and jitter (30 s, 1 min, 2 min, … capped at 2 h) until 24 hours ' +
  'after the event, then recorded as failed. Delivery is at least once: events come from a persisted outbox written with the change ' +
  'they report and survive restarts.';

const WebhookCreate = Type.Object(
  {
    url: Type.String({
      format: 'uri',
      minLength: 1,
      maxLength: 2048,
      description:
        'Where events are POSTed. https:// to any host (receivers on private networks are allowed: the URL is configuration of your ' +
        'own organization); plain http:// only to 127.0.0.1, [::1] or localhost, for local tools. No credentials or fragment.',
    }),
    events: Type.Array(EventType, {
      minItems: 1,
      maxItems: 20,
      description: 'Event types to receive (duplicates are ignored)',
    }),
  },
  { additionalProperties: false, description: DELIVERY_DOC },
);

const Webhook = Type.Object(
  {
    id: Id('whk'),
    url: Type.String(),
    events: Type.Array(EventType),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Webhook' },
);

const WebhookCreated = Type.Object(
  {
    ...Webhook.properties,
    secret: Type.String({
      description: 'whsec_… signing secret. Shown only in this response: store it now.',
    }),
  },
  { $id: 'WebhookCreated', description: DELIVERY_DOC },
);

const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

const WebhookDelivery = Type.Object(
  {
    id: Id('whd'),
    webhook_id: Id('whk'),
    event_id: Type.String({ description: 'evt_ id; the Webhook-Id header and the payload id' }),
    type: EventType,
    status: Type.Union(
      DELIVERY_STATUSES.map((s) => Type.Literal(s)),
      {
        description:
          'pending (not yet answered 2xx; retrying), delivered (a 2xx), failed (gave up after 24 hours)',
      },
    ),
    attempt: Type.Integer({ description: 'Attempts made so far' }),
    status_code: Type.Union([Type.Integer(), Type.Null()], {
      description: 'HTTP status of the last attempt (null: no response)',
    }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed' }),
    next_attempt_at: Type.Union([Timestamp, Type.Null()], {
      description: 'When the next attempt is due (pending only)',
    }),
    delivered_at: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
    webhook: Type.Optional(
      Type.Union([Ref(Webhook), Type.Null()], {
        description: 'Present with ?expand=webhook: the webhook delivered to',
      }),
    ),
  },
  { $id: 'WebhookDelivery' },
);

const deliveriesEndpoint = (webhookId: string): ListEndpoint => ({
  // The path names the webhook, so a cursor is bound to this webhook's log.
  path: `/v1/webhooks/${webhookId}/deliveries`,
  kind: 'webhook_delivery',
  filters: {
    webhook_id: { type: 'id', column: 'webhook_id', prefix: 'whk' },
    status: { type: 'enum', column: 'status', values: DELIVERY_STATUSES },
    type: { type: 'enum', column: 'type', values: WEBHOOK_EVENT_TYPES },
    event_id: { type: 'exact', column: 'event_id', maxLength: 100 },
  },
});

export function webhooksRoutes(app: FastifyInstance, deps: HttpDeps): void {
  listRoute(app, deps, { path: '/v1/webhooks', kind: 'webhook', filters: {} }, Webhook, 'webhooks');
  getOneRoute(app, deps, 'webhook', '/v1/webhooks/:id', Webhook, 'webhooks');

  addRoute(app, {
    operationId: 'createWebhook',
    method: 'POST',
    url: '/v1/webhooks',
    summary: 'Subscribe a URL to events; the response carries the signing secret, shown once',
    tags: ['webhooks'],
    body: WebhookCreate,
    responses: { 201: created('The webhook with its secret', WebhookCreated) },
    handler: async (request, reply) => {
      const { row, secret } = await createWebhook(
        deps.db,
        orgOf(request),
        request.body as { url: string; events: string[] },
      );
      reply.code(201).header('location', `/v1/webhooks/${row.id}`);
      return { ...RESOURCES.webhook.toApi(row, serializeContext(deps, request)), secret };
    },
  });

  addRoute(app, {
    operationId: 'deleteWebhook',
    method: 'DELETE',
    url: '/v1/webhooks/:id',
    summary: 'Delete a webhook; deliveries not yet made are dropped',
    tags: ['webhooks'],
    params: IdParams,
    docParams: idParamsDoc('whk'),
    responses: { 204: DELETED },
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      const row = await loadOwned(deps, request, 'webhook', id);
      await deleteWebhook(deps.db, orgOf(request), row.id);
      return reply.code(204).send();
    },
  });

  addRoute(app, {
    operationId: 'listWebhookDeliveries',
    method: 'GET',
    url: '/v1/webhooks/:id/deliveries',
    summary:
      "A webhook's delivery log, newest first: one entry per event with its attempts and outcome",
    tags: ['webhooks'],
    params: IdParams,
    docParams: idParamsDoc('whk'),
    // The webhook is the path's; the other filters, paging and expand as on every list.
    docQuery: listQueryDoc(deliveriesEndpoint('whk_…'), ['webhook_id']),
    problems: listProblems(deliveriesEndpoint('whk_…')),
    querystring: Type.Object({
      status: Type.Optional(Type.String({ description: 'filter: pending, delivered or failed' })),
      type: Type.Optional(Type.String({ description: 'filter: event type' })),
      event_id: Type.Optional(Type.String({ description: 'filter: evt_ id' })),
      created_after: Type.Optional(
        Type.String({ format: 'date-time', description: 'strictly after (ISO 8601)' }),
      ),
      created_before: Type.Optional(
        Type.String({ format: 'date-time', description: 'strictly before (ISO 8601)' }),
      ),
      limit: Type.Optional(Type.String({ description: '1–100, default 20; above 100 is clamped' })),
      cursor: Type.Optional(
        Type.String({ description: 'opaque cursor from _meta.next or _meta.prev' }),
      ),
      expand: Type.Optional(Type.String({ description: 'webhook' })),
    }),
    responses: { 200: listOf(WebhookDelivery) },
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      const row = await loadOwned(deps, request, 'webhook', id);
      const body = await runListJson(deliveriesEndpoint(row.id), {
        organizationId: orgOf(request),
        query: { ...(request.query as Record<string, unknown>), webhook_id: row.id },
        db: deps.db,
        cursors: deps.cursors,
        serialize: serializeContext(deps, request),
      });
      return sendJsonText(reply, body);
    },
  });
}
