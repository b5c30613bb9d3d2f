// Shared value types of the vision core. Units are stated on every field: "sheet pixels" are pixels
// of the rasterized sheet at its `dpi`, origin top-left, x to the right, y down.

/** A single-channel 8-bit image (0 = black ink, 255 = white paper), row-major, no padding. */
export interface GreyImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** One page rendered to pixels. */
export interface PageRaster extends GreyImage {
  /** Dots per inch the page was rendered at. */
  dpi: number;
  /** 0-based page index in the source document. */
  index: number;
  /** Page size in PDF points (1/72 in) after /Rotate and crop box are applied. */
  widthPt: number;
  heightPt: number;
  /**
   * PDFs: the page's line work as PDFium draws it from the page's objects (stroked paths, text, small
   * filled symbols, annotations; not images, shadings or area fills), as 1-bit PNG scanlines: a filter
   * byte (0) then ceil(width / 8) bytes a row, leftmost pixel in the high bit, 1 = line work. Absent
   * for images and scans (no object draws line work) and when not asked for.
   */
  lineWork?: Uint8Array;
  /**
   * PDFs with area fills of tone or shadings: the pixels those objects draw (pdfium.adapter.ts
   * objectLayerPasses), 1-bit PNG scanlines as lineWork. Only with lineWork.
   */
  fillWork?: Uint8Array;
  /**
   * PDFs with annotations that draw (clouds, callouts, markups): the pixels they draw, 1-bit PNG
   * scanlines as lineWork. Only with lineWork.
   */
  annotWork?: Uint8Array;
  /**
   * The page in colour, R G B (3 B/px, row-major, no padding), when it was rendered in colour and
   * has colour (pdfium.adapter.ts, `colour` render option); `data` is then the grey derived from
   * it. Absent for grey pages: they are stored and shown with one channel.
   */
  rgb?: Uint8Array;
  /**
   * For a colour render: how many of its pixels (of the band's rows, for a band) are coloured
   * (pdfium.adapter.ts, COLOUR_CHROMA). Absent when the page rendered grey.
   */
  colourPixels?: number;
}

/** A run of text with its box in sheet pixels (origin top-left). */
export interface TextItem {
  text: string;
  x: number;
  y: number;
  width: number;
  height: number;
  /** Approximate font size in sheet pixels. */
  fontSize: number;
  /** Text direction in degrees (0 = left to right, 90 = bottom to top on the sheet). */
  angle: number;
  /** The text of a PDF markup annotation (its /Contents), boxed by the annotation: not the drawing's. */
  markup?: boolean;
}

export interface BBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export type TextSource = 'vector' | 'ocr' | 'none';

export type BlockType =
  /** The whole page (contract §4): exactly one per sheet; the other types are views found on it. */
  | 'Sheet'
  | 'Plan'
  | 'Elevation'
  | 'Section'
  | 'Detail'
  | 'Schedule'
  | 'Legend'
  | 'Notes'
  | 'KeyPlan'
  | 'TitleBlock'
  | 'Diagram'
  | 'Other';

export type Discipline =
  | 'general'
  | 'hazardous_materials'
  | 'survey'
  | 'geotechnical'
  | 'civil'
  | 'landscape'
  | 'structural'
  | 'architectural'
  | 'interiors'
  | 'equipment'
  | 'fire_protection'
  | 'plumbing'
  | 'process'
  | 'mechanical'
  | 'electrical'
  | 'distributed_energy'
  | 'telecommunications'
  | 'resource'
  | 'other'
  | 'contractor'
  | 'operations'
  | 'unknown';
