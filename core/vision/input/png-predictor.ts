// PNG predictors of PDF image streams (ISO 32000-1 §7.4.4.4, /Predictor 10-15): every row of the
// inflated data starts with a filter-type byte (0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth, as in PNG)
// and each sample is stored as its difference from a prediction made from its left, upper and
// upper-left neighbours of the same component. Undoing them is a running sum along each row.
//
// Why here and not in PDFium: PDFium in WebAssembly undoes predictors at ~7 ns a byte; the scanned
// sheets of the fixtures are tiles of /Predictor 15 RGB images (366 MB of samples in the beam set),
// where this costs PDFium about 40 % of its render time. This loop runs at about a tenth of that.
// Its output goes to PDFium or to the painter (pdfium.adapter.ts, decodeImages).

/**
 * Undoes the PNG predictors of `src` (`height` rows of 1 + width x comps bytes, 8-bit samples) into
 * `out`: row y of the image at `outOffset + y * stride`, `comps` bytes a pixel, components in reverse
 * order when `reverse` (RGB samples into a BGR bitmap). Returns false, leaving `out` partly written,
 * when `src` has the wrong length or a row's filter type is not 0-4.
 */
export function unpredictPng(
  src: Uint8Array,
  width: number,
  height: number,
  comps: 1 | 3,
  out: Uint8Array,
  outOffset: number,
  stride: number,
  reverse: boolean,
): boolean {
  const rowBytes = width * comps;
  if (src.length !== height * (rowBytes + 1)) return false;
  if (stride < rowBytes || outOffset + (height - 1) * stride + rowBytes > out.length) {
    throw new RangeError(
      `Expected room for ${height} rows of ${rowBytes} bytes at stride ${stride} from ${outOffset} but the target holds ${out.length} bytes`,
    );
  }
  // Component k of a pixel is written at position pos[k] of its pixel in `out`.
  const pos = comps === 3 && reverse ? [2, 1, 0] : [0, 1, 2];
  const [p0, p1, p2] = pos as [number, number, number];
  for (let y = 0; y < height; y++) {
    const s = y * (rowBytes + 1);
    const type = src[s]!;
    const o = outOffset + y * stride;
    if (comps === 3 && type === 1) {
      // Sub on RGB, the common case (every row of the fixtures' scans): one pass, three sums.
      let a = 0;
      let b = 0;
      let c = 0;
      for (let si = s + 1, di = o, end = o + rowBytes; di < end; si += 3, di += 3) {
        a = (a + src[si]!) & 255;
        b = (b + src[si + 1]!) & 255;
        c = (c + src[si + 2]!) & 255;
        out[di + p0] = a;
        out[di + p1] = b;
        out[di + p2] = c;
      }
      continue;
    }
    for (let k = 0; k < comps; k++) {
      const p = pos[k]!;
      let si = s + 1 + k;
      let di = o + p;
      const end = o + rowBytes;
      switch (type) {
        case 0:
          for (; di < end; di += comps, si += comps) out[di] = src[si]!;
          break;
        case 1: {
          let left = 0;
          for (; di < end; di += comps, si += comps) {
            left = (left + src[si]!) & 255;
            out[di] = left;
          }
          break;
        }
        case 2:
          if (y === 0) for (; di < end; di += comps, si += comps) out[di] = src[si]!;
          else
            for (; di < end; di += comps, si += comps)
              out[di] = (src[si]! + out[di - stride]!) & 255;
          break;
        case 3: {
          let left = 0;
          for (; di < end; di += comps, si += comps) {
            const above = y === 0 ? 0 : out[di - stride]!;
            left = (src[si]! + ((left + above) >> 1)) & 255;
            out[di] = left;
          }
          break;
        }
        case 4: {
          let left = 0;
          let upLeft = 0;
          for (; di < end; di += comps, si += comps) {
            const above = y === 0 ? 0 : out[di - stride]!;
            const pa = Math.abs(above - upLeft);
            const pb = Math.abs(left - upLeft);
            const pc = Math.abs(left + above - 2 * upLeft);
            const pred = pa <= pb && pa <= pc ? left : pb <= pc ? above : upLeft;
            left = (src[si]! + pred) & 255;
            out[di] = left;
            upLeft = above;
          }
          break;
        }
        default:
          return false;
      }
    }
  }
  return true;
}

/**
 * PNG-filters 8-bit samples, the inverse of unpredictPng: every row of `height` rows of width x comps
 * samples gets filter `type` (0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth), or 'mixed' (row y gets type
 * y mod 5), behind its filter-type byte. For the workers' warm-up sheet and test inputs.
 */
export function predictPng(
  px: Uint8Array,
  width: number,
  height: number,
  comps: number,
  type: number | 'mixed',
): Buffer {
  const rb = width * comps;
  const out = Buffer.alloc(height * (rb + 1));
  for (let y = 0; y < height; y++) {
    const t = type === 'mixed' ? y % 5 : type;
    const o = y * (rb + 1);
    const r = y * rb;
    const up = y > 0;
    out[o] = t;
    for (let i = 0; i < rb; i++) {
      const a = i >= comps ? px[r + i - comps]! : 0;
      const b = up ? px[r - rb + i]! : 0;
      let pred = 0;
      if (t === 1) pred = a;
      else if (t === 2) pred = b;
      else if (t === 3) pred = (a + b) >> 1;
      else if (t === 4) {
        const c = up && i >= comps ? px[r - rb + i - comps]! : 0;
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      out[o + 1 + i] = (px[r + i]! - pred) & 255;
    }
  }
  return out;
}
