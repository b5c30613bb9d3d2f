import { describe, expect, it } from 'vitest';
import { contentTypeFor, drawingNameFor } from './upload';

describe('upload helpers', () => {
  it('declares the type from the MIME type or, failing that, the extension', () => {
    expect(contentTypeFor({ name: 'a.pdf', type: 'application/pdf' })).toBe('application/pdf');
    expect(contentTypeFor({ name: 'A.PDF', type: '' })).toBe('application/pdf');
    expect(contentTypeFor({ name: 'scan.tif', type: '' })).toBe('image/tiff');
    expect(
      contentTypeFor({ name: 'notes.docx', type: 'application/vnd.openxmlformats' }),
    ).toBeNull();
  });
  it('names a drawing after its file without the extension', () => {
    expect(drawingNameFor('20190602_beam-proposal_5-sheets.pdf')).toBe(
      '20190602_beam-proposal_5-sheets',
    );
    expect(drawingNameFor('.pdf')).toBe('.pdf');
  });
});
