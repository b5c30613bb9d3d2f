import { describe, expect, it } from 'vitest';
import { newId } from '../domain/ids';
import {
  blockCropKey,
  drawingPrefix,
  fileKey,
  filesPrefix,
  overlayImageKey,
  overlayPrefix,
  parseFileKey,
  parseObjectKey,
  projectPrefix,
  sheetImageKey,
  sheetThumbnailKey,
  sheetTileKey,
} from './keys';
import { keyProblem } from './object-store';

const prj = newId('project');
const drw = newId('drawing');
const sht = newId('sheet');

describe('fileKey', () => {
  it('sorts newest first, then id descending, as the contract orders lists', () => {
    const base = Date.parse('2026-11-21T09:30:00.000Z');
    const files = Array.from({ length: 400 }, (_, i) => ({
      // Many share a millisecond so the id tiebreak is exercised.
      createdAt: new Date(base + Math.floor(i / 4) * 37).toISOString(),
      id: newId('file'),
    }));
    const expected = [...files]
      .sort((a, b) =>
        a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? 1 : -1) : a.id < b.id ? 1 : -1,
      )
      .map((f) => f.id);
    const byKey = files
      .map((f) => ({ key: fileKey(prj, f.createdAt, f.id), id: f.id }))
      .sort((a, b) => (a.key < b.key ? -1 : 1))
      .map((f) => f.id);
    expect(byKey).toEqual(expected);
  });

  it('orders ids of different lengths descending too (prefix ids sort after their extensions)', () => {
    const t = '2026-01-01T00:00:00.000Z';
    const ids = ['fil_a', 'fil_ab', 'fil_b', 'fil_0', 'fil_zz', 'fil_z'];
    const byKey = ids
      .map((id) => [fileKey(prj, t, id), id] as const)
      .sort((a, b) => (a[0] < b[0] ? -1 : 1));
    expect(byKey.map((x) => x[1])).toEqual([...ids].sort().reverse());
  });

  it('is a valid key under filesPrefix and parses back', () => {
    const fil = newId('file');
    const k = fileKey(prj, '2026-11-21T09:30:00.123Z', fil);
    expect(keyProblem(k)).toBeNull();
    expect(k.startsWith(filesPrefix(prj))).toBe(true);
    expect(k.startsWith(projectPrefix(prj))).toBe(true);
    expect(parseFileKey(k)).toEqual({
      projectId: prj,
      fileId: fil,
      createdAt: '2026-11-21T09:30:00.123Z',
    });
    expect(parseObjectKey(k)).toMatchObject({ kind: 'file', fileId: fil });
  });

  it('refuses wrong ids and timestamps with an actionable message', () => {
    const fil = newId('file');
    expect(() => fileKey('drw_abc', '2026-11-21T09:30:00.123Z', fil)).toThrow(
      /project id for projectId/,
    );
    expect(() => fileKey(prj, '2026-11-21T09:30:00.123Z', 'prj_abc')).toThrow(/file id for fileId/);
    expect(() => fileKey(prj, '2026-11-21T09:30:00Z', fil)).toThrow(/milliseconds/);
    expect(() => fileKey(prj, '2026-02-30T09:30:00.123Z', fil)).toThrow(/milliseconds/);
    expect(() => fileKey(prj, '2026-11-21T09:30:00.123Z', '../../etc')).toThrow(TypeError);
  });
});

describe('other keys', () => {
  it('places everything of a project under its prefix and parses each kind back', () => {
    const blk = newId('block');
    const ovl = newId('overlay');
    const cases = [
      [
        sheetImageKey(prj, drw, sht),
        { kind: 'sheet-image', projectId: prj, drawingId: drw, sheetId: sht, ext: 'png' },
      ],
      [sheetThumbnailKey(prj, drw, sht), { kind: 'sheet-thumbnail', sheetId: sht, ext: 'webp' }],
      [
        sheetTileKey(prj, drw, sht, { z: 3, x: 10, y: 2 }),
        { kind: 'sheet-tile', z: 3, x: 10, y: 2, ext: 'webp' },
      ],
      [blockCropKey(prj, drw, sht, blk), { kind: 'block-crop', blockId: blk }],
      [
        overlayImageKey(prj, ovl, 'combined'),
        { kind: 'overlay-image', overlayId: ovl, variant: 'combined' },
      ],
      [
        overlayImageKey(prj, ovl, 'combined-cb-safe', 'webp'),
        { variant: 'combined-cb-safe', ext: 'webp' },
      ],
      [overlayImageKey(prj, ovl, 'aligned-b'), { variant: 'aligned-b' }],
    ] as const;
    for (const [key, parsed] of cases) {
      expect(keyProblem(key)).toBeNull();
      expect(key.startsWith(projectPrefix(prj))).toBe(true);
      expect(parseObjectKey(key)).toMatchObject(parsed);
    }
    expect(sheetImageKey(prj, drw, sht).startsWith(drawingPrefix(prj, drw))).toBe(true);
    expect(overlayImageKey(prj, ovl, 'addition').startsWith(overlayPrefix(prj, ovl))).toBe(true);
  });

  it('rejects bad parts', () => {
    expect(() => sheetImageKey(prj, drw, sht, 'exe' as 'png')).toThrow(/ext/);
    expect(() => sheetTileKey(prj, drw, sht, { z: -1, x: 0, y: 0 })).toThrow(RangeError);
    expect(() => sheetTileKey(prj, drw, sht, { z: 1, x: 0.5, y: 0 })).toThrow(RangeError);
    expect(() => overlayImageKey(prj, newId('overlay'), 'combined-../x' as 'combined')).toThrow(
      /variant/,
    );
    expect(() => blockCropKey(prj, drw, sht, newId('sheet'))).toThrow(/block id/);
  });

  it('parses only keys a builder would produce', () => {
    expect(parseObjectKey('projects/prj_a/files/123')).toBeNull();
    expect(
      parseObjectKey(`projects/${prj}/drawings/${drw}/sheets/${sht}/tiles/01/2_3.webp`),
    ).toBeNull();
    expect(parseObjectKey(`projects/${prj}/drawings/${drw}/sheets/${sht}/image.gif`)).toBeNull();
    expect(parseObjectKey('elsewhere/x')).toBeNull();
  });
});
