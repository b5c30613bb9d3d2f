import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { Job } from '../../contract/schemas';
import { ApiError } from '../../domain/errors';
import type { JobRunner } from '../../jobs/job-runner';
import { orgOf, type HttpDeps } from '../deps';
import { addRoute } from '../router';
import { IdParams, idParamsDoc } from './resource-reads';

const TERMINAL = new Set(['Completed', 'Failed', 'Canceled']);

// Job control beyond the generic reads: cancel (reaching every descendant) and a Server-Sent
// Events stream of the job object on every change, ending at a terminal status.
export function jobsRoutes(
  app: FastifyInstance,
  _deps: HttpDeps,
  runner: JobRunner,
  opts: { maxStreamsPerKey: number },
): void {
  const streams = new Map<string, number>();

  addRoute(app, {
    operationId: 'cancelJob',
    method: 'POST',
    url: '/v1/jobs/:id/cancel',
    summary: 'Cancel a job and every descendant (409 when already terminal)',
    description: 'No body needed. Answers the job as it is after the cancel.',
    tags: ['jobs'],
    params: IdParams,
    docParams: idParamsDoc('job'),
    responses: { 202: Job },
    problems: ['conflict'],
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      const job = await runner.cancel(orgOf(request), id);
      return reply.code(202).send(job);
    },
  });

  addRoute(app, {
    operationId: 'streamJobEvents',
    method: 'GET',
    url: '/v1/jobs/:id/events',
    summary: 'Server-Sent Events: the job object on every change, ending at a terminal status',
    tags: ['jobs'],
    params: IdParams,
    docParams: idParamsDoc('job'),
    responses: {
      200: {
        description:
          'A text/event-stream of `event: job` messages whose `data` is the Job object (JSON), the first at once, then one per change; the stream ends after a terminal status. Comment lines keep the connection alive.',
        content: { 'text/event-stream': Type.String() },
      },
    },
    // (429 rate_limited also when the key already has its maximum of streams open.)
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      const org = orgOf(request);
      const job = await runner.get(org, id);
      const keyId = request.auth!.keyId;
      const open = streams.get(keyId) ?? 0;
      if (open >= opts.maxStreamsPerKey) {
        throw new ApiError(
          'rate_limited',
          `This API key already has ${open} open event streams; at most ${opts.maxStreamsPerKey} are allowed. Close one and retry.`,
          {
            headers: { 'retry-after': '5' },
          },
        );
      }
      streams.set(keyId, open + 1);
      const headers: Record<string, string> = {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        'x-accel-buffering': 'no',
        // No `Connection` header: Node keeps HTTP/1.1 connections alive by default and must still
        // honour a client's `Connection: close` (forcing keep-alive left such sockets open).
      };
      for (const [k, v] of Object.entries(reply.getHeaders()))
        if (v !== undefined) headers[k] = String(v);
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, headers);
      let seq = 0;
      const send = (j: unknown) =>
        res.write(`id: ${++seq}\nevent: job\ndata: ${JSON.stringify(j)}\n\n`);
      let closed = false;
      const finish = () => {
        if (closed) return;
        closed = true;
        runner.events.off('job', onJob);
        clearInterval(heartbeat);
        streams.set(keyId, Math.max(0, (streams.get(keyId) ?? 1) - 1));
        res.end();
      };
      const onJob = (j: { id: string; status: string }) => {
        if (j.id !== id) return;
        send(j);
        if (TERMINAL.has(j.status)) finish();
      };
      const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
      runner.events.on('job', onJob);
      request.raw.on('close', finish);
      send(job);
      if (TERMINAL.has(job.status)) finish();
    },
  });
}
