// The few bytes of PDF syntax the service writes itself: numbered objects with a correct xref table
// and trailer (ISO 32000-1 §7.5), and stream objects. Used for the workers' warm-up sheet
// (warmup-sheet.ts) and the hand-built test inputs (synthetic-inputs.ts).

const enc = new TextEncoder();

/** Objects 1.. (1 the catalog) written out with a correct xref table and trailer. */
export function assemblePdf(objs: (string | Uint8Array)[], trailerExtra = ''): Uint8Array {
  const chunks: Uint8Array[] = [enc.encode('%PDF-1.4\n%\xE2\xE3\xCF\xD3\n')];
  let offset = chunks[0]!.length;
  const offsets: number[] = [];
  for (let i = 1; i < objs.length; i++) {
    const body = objs[i]!;
    const head = enc.encode(`${i} 0 obj\n`);
    const b = typeof body === 'string' ? enc.encode(body) : body;
    const foot = enc.encode(`\nendobj\n`);
    offsets[i] = offset;
    for (const c of [head, b, foot]) {
      chunks.push(c);
      offset += c.length;
    }
  }
  const xrefAt = offset;
  let xref = `xref\n0 ${objs.length}\n0000000000 65535 f \n`;
  for (let i = 1; i < objs.length; i++)
    xref += `${String(offsets[i]).padStart(10, '0')} 00000 n \n`;
  xref += `trailer\n<< /Size ${objs.length} /Root 1 0 R ${trailerExtra} >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  chunks.push(enc.encode(xref));
  return new Uint8Array(Buffer.concat(chunks)); // a plain Uint8Array: pdfjs refuses Buffer
}

/** A stream object: `dict` entries (without /Length) and its data. */
export function streamObject(dict: string, data: Uint8Array): Uint8Array {
  return new Uint8Array(
    Buffer.concat([
      enc.encode(`<< ${dict} /Length ${data.length} >>\nstream\n`),
      data,
      enc.encode('\nendstream'),
    ]),
  );
}
