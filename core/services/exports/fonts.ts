import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fontkit, { type Glyph } from '@pdf-lib/fontkit';

// The report's typeface: DejaVu Sans (regular, bold, oblique), a free font (Bitstream Vera licence
// with the Arev additions; resources/fonts/LICENSE-DejaVu.txt) that covers Latin, Greek, Cyrillic
// and the signs drawings use (→ ° ½ ⅛ ⌀ ± × ″ “ ” …). The standard PDF fonts speak WinAnsi only,
// which turned a description's → into -> and ⌀ into Ø; an embedded Unicode font prints the text as
// the API holds it, and a ToUnicode map keeps it selectable and searchable as such.
//
// The TTF files live in resources/fonts/ at the repository root. This module finds them by walking
// up from wherever it runs: core/services/exports/ from source (tests, `blueline serve`), out/main/
// once bundled by electron-vite, <resources>/app.asar.unpacked/out/main/ in a package, where
// electron-builder.yml's extraResources puts the fonts in <resources>/resources/fonts (outside
// app.asar, which worker threads cannot read). BLUELINE_FONTS_DIR overrides the search.

export const FONT_FILES = {
  regular: 'DejaVuSans.ttf',
  bold: 'DejaVuSans-Bold.ttf',
  italic: 'DejaVuSans-Oblique.ttf',
} as const;

export type FontFace = keyof typeof FONT_FILES;

let cached: Record<FontFace, Uint8Array> | null = null;

/** The folder holding the report fonts, or an Error naming where it looked. */
export function findFontsDir(start = dirname(fileURLToPath(import.meta.url))): string {
  const env = process.env.BLUELINE_FONTS_DIR;
  const tried: string[] = [];
  const candidates = env ? [env] : [];
  for (let dir = start, i = 0; i < 8; i++) {
    candidates.push(join(dir, 'resources', 'fonts'));
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  for (const dir of candidates) {
    // app.asar.unpacked holds what worker threads can read; app.asar itself they cannot.
    const unpacked = dir.replace(/app\.asar(?=[\\/])/, 'app.asar.unpacked');
    for (const d of unpacked === dir ? [dir] : [unpacked, dir]) {
      tried.push(d);
      if (existsSync(join(d, FONT_FILES.regular))) return d;
    }
  }
  throw new Error(
    `The report font ${FONT_FILES.regular} was not found (looked in ${tried.join(', ')}); set BLUELINE_FONTS_DIR to the folder holding resources/fonts.`,
  );
}

/** The bytes of the three faces, read once per thread. */
export function reportFontBytes(): Record<FontFace, Uint8Array> {
  if (cached) return cached;
  const dir = findFontsDir();
  const read = (f: string) => new Uint8Array(readFileSync(join(dir, f)));
  cached = {
    regular: read(FONT_FILES.regular),
    bold: read(FONT_FILES.bold),
    italic: read(FONT_FILES.italic),
  };
  return cached;
}

/**
 * @pdf-lib/fontkit with a plain layout: one glyph per code point from the font's cmap, advance
 * widths as they are. pdf-lib lays out every string it measures or draws with fontkit's full
 * shaping (GSUB/GPOS: ligatures, kerning), about 3 ms a call; a report measures thousands (word
 * wrapping, fitting) and ran 25 times slower than with the standard fonts. A report needs neither
 * ligatures (which also make copied text lose letters) nor kerning, and the widths it measures are
 * the widths it draws.
 */
export const plainFontkit = {
  create(data: Uint8Array | Buffer, postscriptName?: string) {
    const font = fontkit.create(data, postscriptName);
    const glyphs = new Map<number, Glyph>();
    const glyphOf = (cp: number) => {
      let g = glyphs.get(cp);
      if (!g) {
        g = font.glyphForCodePoint(cp);
        glyphs.set(cp, g);
      }
      return g;
    };
    font.layout = ((text: string) => ({
      glyphs: Array.from(text, (ch) => glyphOf(ch.codePointAt(0)!)),
    })) as unknown as typeof font.layout;
    return font;
  },
};
