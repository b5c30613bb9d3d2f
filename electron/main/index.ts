// Electron main process: app lifecycle, the embedded service, window security, menu.
//
// The service (core/) runs in this process, on 127.0.0.1 and a free port, over HTTPS with a
// certificate it generates on first start. The window loads the built renderer *from the
// service* (`webRoot`), so page and API share one origin: no CORS, and the CSP can name one
// origin. Heavy work stays off this thread: sharp uses libuv threads and core's job runner
// sends pure-JS pixel loops to a worker pool, so the event loop that routes window input only
// handles HTTP. (Alternative if profiling ever shows main-thread stalls: run core in an
// Electron `utilityProcess.fork()` and pass back `{ baseUrl, caCertPem, apiKey }` over its
// MessagePort; the window code below would not change.)
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { app, BrowserWindow, dialog, ipcMain, session, type WebContents } from 'electron';
import { createService, type Service, type ServiceOptions } from '../../core/index';
import { BRIDGE_CONFIG_CHANNEL, type BluelineBridge } from '../common/bridge';
import { installAppMenu } from './app-menu';
import { redirectBetterSqliteAddon } from './native-binding';
import {
  buildContentSecurityPolicy,
  certificateMatchesPin,
  isAllowedNavigation,
  originOf,
  SERVICE_HOST,
} from './security-policy';

/** Chromium's net error for "certificate invalid", and "accept", for setCertificateVerifyProc. */
const CERT_REJECT = -2;
const CERT_ACCEPT = 0;
/** Let Chromium's own verification decide (for every host that is not our service). */
const CERT_USE_CHROMIUM = -3;

/** Set by `electron-vite dev`: the Vite dev server serving renderer/ with hot reload. */
const devServerUrl = !app.isPackaged ? process.env.ELECTRON_RENDERER_URL : undefined;

interface Running {
  service: Service;
  bridge: BluelineBridge;
  serviceOrigin: string;
  /** Origins a window may show: the service and, in dev, the Vite server. */
  allowedOrigins: string[];
  dataDir: string;
}

let running: Running | null = null;
let mainWindow: BrowserWindow | null = null;
let quitState: 'running' | 'stopping' | 'stopped' = 'running';

// Name before `ready` so userData is `<appData>/Blueline` (e.g. ~/.config/Blueline).
app.setName('Blueline');
// Every renderer is sandboxed, including any created by code we did not anticipate.
app.enableSandbox();

if (!app.requestSingleInstanceLock()) {
  // A second launch hands over to the first (which focuses its window) and exits: two
  // instances would fight over the same SQLite database and data folder.
  app.quit();
} else {
  app.on('second-instance', () => {
    if (!mainWindow) return;
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
  });
  app.whenReady().then(startApp, (err: unknown) => fail(err));
}

async function startApp(): Promise<void> {
  try {
    running = await startService();
  } catch (err) {
    fail(err);
    return;
  }
  const { serviceOrigin, allowedOrigins, service, bridge, dataDir } = running;

  pinServiceCertificate(service.caCertPem);
  applySessionPolicy(serviceOrigin, allowedOrigins);

  ipcMain.on(BRIDGE_CONFIG_CHANNEL, (event) => {
    // Only our own documents get the key; a frame that somehow shows another origin gets null.
    const frameUrl = event.senderFrame?.url ?? '';
    event.returnValue = isAllowedNavigation(frameUrl, allowedOrigins) ? bridge : null;
  });

  installAppMenu({
    dataDir,
    baseUrl: bridge.baseUrl,
    showMessage: (title, detail) => {
      void dialog.showMessageBox({ type: 'info', title, message: title, detail });
    },
  });

  createMainWindow();
  app.on('activate', () => {
    // macOS: clicking the dock icon with no window open reopens one.
    if (BrowserWindow.getAllWindows().length === 0) createMainWindow();
  });
}

async function startService(): Promise<Running> {
  if (!app.isPackaged) {
    // A checkout's node_modules holds better-sqlite3's Node build; use the cached Electron build.
    const addon = redirectBetterSqliteAddon(app.getAppPath());
    console.log(`[blueline] better-sqlite3 addon: ${addon ?? 'as installed'}`);
  }
  const dataDir = path.join(app.getPath('userData'), 'service');
  // electron-vite emits main to out/main and the renderer to out/renderer (inside app.asar
  // when packaged; Electron's fs reads asar paths transparently).
  const webRoot = fileURLToPath(new URL('../renderer', import.meta.url));
  const options: ServiceOptions & { workerUrl?: URL } = {
    dataDir,
    host: SERVICE_HOST,
    port: 0, // any free loopback port; nothing outside this machine can reach it
    webRoot,
    // core's worker-pool thread, emitted beside this file by electron.vite.config.ts: a bundled
    // main process cannot start the worker from its .ts source (see core/jobs/worker-pool.ts).
    workerUrl: unpackedUrl(new URL('./worker-entry.js', import.meta.url)),
  };
  const service = await createService(options);
  const { baseUrl, origin } = await service.start();
  const apiKey = await service.createSessionKey(`desktop session ${new Date().toISOString()}`);
  const devOrigin = devServerUrl ? originOf(devServerUrl) : null;
  return {
    service,
    dataDir,
    serviceOrigin: origin,
    bridge: Object.freeze({ baseUrl, apiKey }),
    allowedOrigins: devOrigin ? [origin, devOrigin] : [origin],
  };
}

/**
 * Worker threads cannot load files from inside app.asar, so electron-builder unpacks out/main
 * (asarUnpack) and the worker is started from app.asar.unpacked. Unchanged outside a package.
 */
function unpackedUrl(url: URL): URL {
  return new URL(url.href.replace(/\/app\.asar\//, '/app.asar.unpacked/'));
}

/**
 * Accept our service's certificate only: on 127.0.0.1 a certificate must be the service's own
 * (or issued by its local CA); every other host keeps Chromium's normal verification.
 */
function pinServiceCertificate(caCertPem: string): void {
  session.defaultSession.setCertificateVerifyProc((request, callback) => {
    if (request.hostname !== SERVICE_HOST) {
      callback(CERT_USE_CHROMIUM);
      return;
    }
    callback(
      certificateMatchesPin(request.certificate.data, caCertPem, SERVICE_HOST)
        ? CERT_ACCEPT
        : CERT_REJECT,
    );
  });
  // Second line of defence: if Chromium still reports an error, accept it only for our
  // origin with our certificate; everything else keeps the default (refuse).
  app.on('certificate-error', (event, _webContents, url, _error, certificate, callback) => {
    const ours =
      running !== null &&
      originOf(url) === running.serviceOrigin &&
      certificateMatchesPin(certificate.data, caCertPem, SERVICE_HOST);
    if (ours) event.preventDefault();
    callback(ours);
  });
}

/** CSP on every response, no permissions, and (dev only) CORS for the Vite-served page. */
function applySessionPolicy(serviceOrigin: string, allowedOrigins: string[]): void {
  const devOrigin = devServerUrl ? originOf(devServerUrl) : null;
  const csp = buildContentSecurityPolicy(
    devOrigin ? { serviceOrigin, devServerOrigin: devOrigin } : { serviceOrigin },
  );
  const ses = session.defaultSession;

  ses.webRequest.onHeadersReceived((details, callback) => {
    const headers = { ...details.responseHeaders };
    // Replace whatever the server sent; header names arrive in the server's casing.
    for (const name of Object.keys(headers)) {
      if (name.toLowerCase() === 'content-security-policy') delete headers[name];
    }
    headers['Content-Security-Policy'] = [csp];
    let statusLine: string | undefined;
    if (devOrigin && originOf(details.url) === serviceOrigin) {
      // `electron-vite dev` only: the page comes from the Vite server, so API calls are
      // cross-origin. Allow exactly that origin and answer preflights here.
      headers['Access-Control-Allow-Origin'] = [devOrigin];
      headers['Access-Control-Allow-Headers'] = [
        'Authorization, Content-Type, Idempotency-Key, X-Request-Id',
      ];
      headers['Access-Control-Allow-Methods'] = ['GET, POST, PATCH, PUT, DELETE'];
      headers['Access-Control-Expose-Headers'] = ['*'];
      if (details.method === 'OPTIONS') statusLine = 'HTTP/1.1 204 No Content';
    }
    callback(statusLine ? { responseHeaders: headers, statusLine } : { responseHeaders: headers });
  });

  // The reviewer needs no camera, notifications, geolocation, …; copy to clipboard is fine.
  const allowedPermissions = new Set(['clipboard-sanitized-write']);
  ses.setPermissionRequestHandler((_wc, permission, callback) =>
    callback(allowedPermissions.has(permission)),
  );
  ses.setPermissionCheckHandler((_wc, permission) => allowedPermissions.has(permission));

  // Requests to anything but our origins (and blob:/data:/devtools:) are cancelled, so even
  // a compromised page cannot send data elsewhere, whatever the CSP says.
  ses.webRequest.onBeforeRequest((details, callback) => {
    const origin = originOf(details.url);
    const local = /^(blob|data|devtools|chrome-extension):/.test(details.url);
    const devSocket =
      devOrigin !== null && details.url.startsWith(devOrigin.replace(/^http/, 'ws'));
    callback({
      cancel: !(local || devSocket || (origin !== null && allowedOrigins.includes(origin))),
    });
  });
}

function createMainWindow(): void {
  if (!running) return;
  const { allowedOrigins, serviceOrigin } = running;
  const win = new BrowserWindow({
    width: 1440,
    height: 900,
    minWidth: 960,
    minHeight: 600,
    show: false,
    title: 'Blueline',
    backgroundColor: '#0f172a',
    webPreferences: {
      preload: fileURLToPath(new URL('../preload/index.cjs', import.meta.url)),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
    },
  });
  mainWindow = win;
  guardWebContents(win.webContents, allowedOrigins);
  win.once('ready-to-show', () => win.show());
  win.on('closed', () => {
    if (mainWindow === win) mainWindow = null;
  });
  void win.loadURL(devServerUrl ?? `${serviceOrigin}/`);
}

/** Navigation and new-window guards: the window only ever shows our own origin. */
function guardWebContents(contents: WebContents, allowedOrigins: string[]): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  const blockForeign = (event: { preventDefault(): void }, url: string) => {
    if (!isAllowedNavigation(url, allowedOrigins)) event.preventDefault();
  };
  contents.on('will-navigate', blockForeign);
  contents.on('will-redirect', blockForeign);
  contents.on('will-frame-navigate', (details) => {
    if (!isAllowedNavigation(details.url, allowedOrigins)) details.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

// Quit: stop the service gracefully (drain requests, leave running jobs resumable, close the
// database) before Electron exits. `before-quit` is deferred once until stop() settles.
app.on('before-quit', (event) => {
  if (!running || quitState === 'stopped') return;
  event.preventDefault();
  if (quitState === 'stopping') return;
  quitState = 'stopping';
  running.service
    .stop()
    .catch((err: unknown) => console.error('[blueline] service stop failed:', err))
    .finally(() => {
      quitState = 'stopped';
      app.quit();
    });
});

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});

// Ctrl-C / kill in a terminal: go through the same graceful path.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => app.quit());

function fail(err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  console.error('[blueline] failed to start:', err);
  // The usual cause in development: better-sqlite3 compiled for Node, not Electron.
  const abiHint = /NODE_MODULE_VERSION|was compiled against a different Node\.js version/.test(
    message,
  )
    ? '\n\nbetter-sqlite3 is built for Node.js, not Electron. Start the app with `npm start`, which builds ' +
      'it for Electron once (cached in node_modules/.cache/blueline-native), or run ' +
      '`node electron/tools/native-modules.mjs electron`.'
    : '';
  dialog.showErrorBox('Blueline could not start', `${message}${abiHint}`);
  quitState = 'stopped';
  app.exit(1);
}
