import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { PageSource } from './deep-tiles';

/** S101 (page 0) of a beam proposal issue in fixtures/drawings, as the deep-tile renderers take it. */
export function beamPageSource(date: '20190601' | '20190602'): PageSource {
  const file = path.resolve(
    import.meta.dirname,
    `../../../fixtures/drawings/${date}_beam-proposal_5-sheets.pdf`,
  );
  return {
    path: file,
    bytesKey: createHash('sha256').update(readFileSync(file)).digest('hex'),
    contentType: 'application/pdf',
    index: 0,
    dpi: 200,
    maxPixels: 300_000_000,
  };
}
