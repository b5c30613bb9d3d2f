import type { Db } from '../store/db';

// What every route and service receives: built once by createService, never a global.
export interface ServiceConfig {
  dataDir: string;
  maxUploadBytes: number;
  maxPagesPerDrawing: number;
  maxPixelsPerPage: number;
  rateLimits: { document: number; vision: number };
  maxSseStreamsPerKey: number;
  /** Disk bound of the stored image tiles (least recently used deleted past it), bytes. */
  tileCacheMaxBytes: number;
}

export const DEFAULT_CONFIG: Omit<ServiceConfig, 'dataDir'> = {
  maxUploadBytes: 1024 ** 3,
  maxPagesPerDrawing: 2000,
  maxPixelsPerPage: 300_000_000,
  rateLimits: { document: 600, vision: 120 },
  maxSseStreamsPerKey: 20,
  tileCacheMaxBytes: 2 * 1024 ** 3,
};

export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

export interface BaseContext {
  db: Db;
  config: ServiceConfig;
  log: Logger;
}

/**
 * The part of the job runner services need to queue work (services sit below jobs, so they see
 * only its shape). Call it inside the transaction that writes the row the job acts on, with that
 * transaction's handle.
 */
export interface JobEnqueuer {
  enqueue(
    job: {
      organization_id: string;
      project_id: string;
      type: string;
      target_type: 'drawing' | 'sheet' | 'block' | 'overlay';
      target_id: string;
      payload?: unknown;
      credits_reserved?: number;
    },
    tx?: Db,
  ): Promise<{ id: string; status: string }>;
}
