// Loads the native modules the service needs and exercises each once; prints one JSON line.
// Run by electron/native-modules.test.ts inside Electron, either as Electron's Node
// (ELECTRON_RUN_AS_NODE=1: the same V8 and ABI as the main process) or as a real main process
// (`electron native-probe.cjs`, needs a display). BLUELINE_SQLITE_BINDING points better-sqlite3
// at an addon built for Electron without replacing the Node build that tests use.
// CommonJS on purpose: Electron runs it directly, without a bundler.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

async function probe() {
  const Database = require('better-sqlite3');
  const binding = process.env.BLUELINE_SQLITE_BINDING;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blueline-native-probe-'));
  try {
    const db = new Database(path.join(dir, 'probe.db'), binding ? { nativeBinding: binding } : {});
    const journalMode = db.pragma('journal_mode = WAL', { simple: true });
    db.exec(
      "CREATE VIRTUAL TABLE t USING fts5(x); INSERT INTO t VALUES ('steel beam'), ('timber joist');",
    );
    const ftsHit = db.prepare('SELECT x FROM t WHERE t MATCH ?').get('beam');
    const sqliteVersion = db.prepare('SELECT sqlite_version() AS v').get().v;
    db.close();

    const sharp = require('sharp');
    // 8x4 grey gradient, 1 channel: what the vision code hands to sharp.
    const pixels = Buffer.from(Array.from({ length: 32 }, (_, i) => i * 8));
    const png = await sharp(pixels, { raw: { width: 8, height: 4, channels: 1 } })
      .toColourspace('b-w')
      .png()
      .toBuffer();
    const meta = await sharp(png).metadata();

    // PDFium (WASM) rasterizes and reads every PDF page: it must instantiate inside Electron.
    const { init } = await import('@embedpdf/pdfium');
    const wasm = fs.readFileSync(require.resolve('@embedpdf/pdfium/pdfium.wasm'));
    const pdfium = await init({
      wasmBinary: wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength),
    });
    pdfium.PDFiumExt_Init();
    const doc = pdfium.FPDF_CreateNewDocument();
    const page = pdfium.FPDFPage_New(doc, 0, 612, 792);
    const pdfiumPages = pdfium.FPDF_GetPageCount(doc);
    pdfium.FPDF_ClosePage(page);
    pdfium.FPDF_CloseDocument(doc);

    return {
      ok: true,
      electron: process.versions.electron ?? null,
      modules: process.versions.modules,
      runAsNode: process.env.ELECTRON_RUN_AS_NODE === '1',
      journalMode,
      ftsHit: ftsHit ? ftsHit.x : null,
      sqliteVersion,
      png: { width: meta.width, height: meta.height, channels: meta.channels },
      pdfiumPages,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function report(result) {
  process.stdout.write(`BLUELINE_PROBE ${JSON.stringify(result)}\n`);
}

const fail = (err) => ({ ok: false, error: String(err && err.stack ? err.stack : err) });

if (process.versions.electron && process.env.ELECTRON_RUN_AS_NODE !== '1') {
  // Real Electron main process.
  const { app } = require('electron');
  app.whenReady().then(async () => {
    report(await probe().catch(fail));
    app.exit(0);
  });
} else {
  probe()
    .catch(fail)
    .then((r) => {
      report(r);
      process.exit(r.ok ? 0 : 1);
    });
}
