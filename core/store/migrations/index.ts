import { sql as initial } from './001-initial.migration';
import { sql as searchIndex } from './002-search-index.migration';
import { sql as compare } from './003-compare.migration';
import { sql as webhooks } from './004-webhooks.migration';
import { sql as searchRecords } from './005-search-records.migration';
import { sql as symbolIndexes } from './006-symbol-indexes.migration';
import { sql as jobStalls } from './007-job-stalls.migration';
import { sql as sheetBlocks } from './008-sheet-blocks.migration';
import { sql as drawingIssued } from './009-drawing-issued.migration';
import { sql as jobClaims } from './010-job-claims.migration';
import { sql as exportFiles } from './011-export-files.migration';
import { sql as changeCategories } from './012-change-categories.migration';
import { sql as jobDispatch } from './013-job-dispatch.migration';
import { sql as searchWords } from './014-search-words.migration';
import { sql as webhookClaims } from './015-webhook-claims.migration';
import { sql as attemptObjects } from './016-attempt-objects.migration';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

// Numbered, forward-only. Append new migrations; never edit one that has shipped.
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial', sql: initial },
  { version: 2, name: 'search-index', sql: searchIndex },
  { version: 3, name: 'compare', sql: compare },
  { version: 4, name: 'webhooks', sql: webhooks },
  { version: 5, name: 'search-records', sql: searchRecords },
  { version: 6, name: 'symbol-indexes', sql: symbolIndexes },
  { version: 7, name: 'job-stalls', sql: jobStalls },
  { version: 8, name: 'sheet-blocks', sql: sheetBlocks },
  { version: 9, name: 'drawing-issued', sql: drawingIssued },
  { version: 10, name: 'job-claims', sql: jobClaims },
  { version: 11, name: 'export-files', sql: exportFiles },
  { version: 12, name: 'change-categories', sql: changeCategories },
  { version: 13, name: 'job-dispatch', sql: jobDispatch },
  { version: 14, name: 'search-words', sql: searchWords },
  { version: 15, name: 'webhook-claims', sql: webhookClaims },
  { version: 16, name: 'attempt-objects', sql: attemptObjects },
];
