// Messages between the worker pool (main thread) and its workers, and the helpers a task uses.
// Kept free of imports so both sides (and every task module) can load it cheaply.

/** A task: pure CPU work on structured-cloneable arguments. Runs in a worker thread. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type WorkerTask = (args: any) => unknown;
export type WorkerTaskRegistry = Record<string, WorkerTask>;

import type { TransferListItem } from 'node:worker_threads';

const TRANSFER = Symbol('transfer');

/** A task's return value with the buffers to move (not copy) back to the main thread. */
export interface Transferred<T> {
  readonly [TRANSFER]: true;
  readonly value: T;
  readonly transferList: readonly TransferListItem[];
}

/**
 * Return `withTransfer(value, [buf.buffer])` from a task to hand large typed arrays back without a
 * copy. The worker gives them up: it must not touch them afterwards.
 */
export function withTransfer<T>(
  value: T,
  transferList: readonly TransferListItem[],
): Transferred<T> {
  return { [TRANSFER]: true, value, transferList };
}

export function isTransferred(v: unknown): v is Transferred<unknown> {
  return typeof v === 'object' && v !== null && (v as Record<symbol, unknown>)[TRANSFER] === true;
}

/** The result type the main thread sees for a task: its resolved value, transfer wrapper removed. */
export type TaskResult<F extends WorkerTask> =
  Awaited<ReturnType<F>> extends Transferred<infer T> ? T : Awaited<ReturnType<F>>;
export type TaskArgs<F extends WorkerTask> = Parameters<F>[0];

export interface TaskRequest {
  id: number;
  task: string;
  args: unknown;
}

export interface SerializedError {
  name: string;
  message: string;
  /** ApiError members, so a task can fail with a Problem code that survives the thread hop. */
  code?: string;
  detail?: string;
}

export type TaskResponse =
  { id: number; ok: true; value: unknown } | { id: number; ok: false; error: SerializedError };

/**
 * A part of a task's result sent before the task ends (taskProgress): the pool hands it to the
 * caller's TaskOptions.onProgress, in order, before the task's own answer.
 */
export interface TaskProgress {
  id: number;
  progress: unknown;
}

let progressSink: ((value: unknown, transferList: readonly TransferListItem[]) => void) | null =
  null;

/** Set by worker-entry.ts around each task: where taskProgress goes. */
export function setProgressSink(sink: typeof progressSink): void {
  progressSink = sink;
}

/**
 * From a task: sends `value` to the caller now (its TaskOptions.onProgress), moving the buffers of
 * `transferList` (the worker must not touch them afterwards). Nothing happens outside a pool task.
 * For results that are ready in parts: a deep-zoom render's tiles, cell by cell.
 */
export function taskProgress(value: unknown, transferList: readonly TransferListItem[] = []): void {
  progressSink?.(value, transferList);
}
