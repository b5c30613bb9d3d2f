// The built main process (out/main/index.js, exactly what ships) run under Node against the real
// core service, with the `electron` module replaced by a recording fake. Electron's binary is
// not needed, so this runs everywhere; it checks the wiring the binary-only e2e test cannot
// check here: the service starts on loopback and serves the renderer, the session key works,
// the certificate pin accepts the service's real certificate and nothing else, the CSP and
// request filter, the bridge answers only our origin, window options and guards, and quitting
// stops the service.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { fileURLToPath, pathToFileURL } from 'node:url';
import selfsigned from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BRIDGE_CONFIG_CHANNEL, type BluelineBridge } from '../common/bridge';

type Handler = (...args: never[]) => unknown;

const fake = vi.hoisted(() => {
  const listeners = new Map<string, Array<(...args: unknown[]) => void>>();
  const state = {
    userData: '',
    appPath: '',
    names: [] as string[],
    sandboxEnabled: false,
    singleInstanceAsked: false,
    quitCalls: 0,
    exitCode: undefined as number | undefined,
    errorBoxes: [] as string[],
    verifyProc: undefined as undefined | ((req: unknown, cb: (r: number) => void) => void),
    onHeadersReceived: undefined as undefined | ((d: unknown, cb: (r: unknown) => void) => void),
    onBeforeRequest: undefined as undefined | ((d: unknown, cb: (r: unknown) => void) => void),
    permissionRequest: undefined as
      undefined | ((wc: unknown, p: string, cb: (ok: boolean) => void) => void),
    ipc: new Map<
      string,
      (event: { senderFrame: { url: string } | null; returnValue?: unknown }) => void
    >(),
    windows: [] as Array<{
      options: { webPreferences: Record<string, unknown> };
      loadedUrl?: string;
      windowOpenHandler?: (d: { url: string }) => unknown;
      contentsHandlers: Map<string, (...args: unknown[]) => void>;
    }>,
    menuSet: false,
  };
  const app = {
    setName: (n: string) => state.names.push(n),
    enableSandbox: () => {
      state.sandboxEnabled = true;
    },
    requestSingleInstanceLock: () => {
      state.singleInstanceAsked = true;
      return true;
    },
    whenReady: () => Promise.resolve(),
    isPackaged: false,
    getPath: (name: string) => {
      if (name !== 'userData') throw new Error(`unexpected getPath(${name})`);
      return state.userData;
    },
    getAppPath: () => state.appPath,
    on: (event: string, fn: (...args: unknown[]) => void) => {
      listeners.set(event, [...(listeners.get(event) ?? []), fn]);
      return app;
    },
    emit: (event: string, ...args: unknown[]) => {
      for (const fn of listeners.get(event) ?? []) fn(...args);
    },
    quit: () => {
      state.quitCalls += 1;
      app.emit('before-quit', { preventDefault: () => undefined });
    },
    exit: (code: number) => {
      state.exitCode = code;
    },
  };
  class BrowserWindow {
    static all: BrowserWindow[] = [];
    static getAllWindows = () => BrowserWindow.all;
    webContents: {
      setWindowOpenHandler: (fn: (d: { url: string }) => unknown) => void;
      on: (event: string, fn: (...args: unknown[]) => void) => void;
    };
    private record: (typeof state.windows)[number];
    constructor(options: { webPreferences: Record<string, unknown> }) {
      const record: (typeof state.windows)[number] = { options, contentsHandlers: new Map() };
      this.record = record;
      state.windows.push(record);
      BrowserWindow.all.push(this);
      this.webContents = {
        setWindowOpenHandler: (fn) => {
          record.windowOpenHandler = fn;
        },
        on: (event, fn) => {
          record.contentsHandlers.set(event, fn);
        },
      };
    }
    once() {}
    on() {}
    show() {}
    loadURL(url: string) {
      this.record.loadedUrl = url;
      return Promise.resolve();
    }
  }
  const module = {
    app,
    BrowserWindow,
    Menu: {
      buildFromTemplate: (t: unknown) => t,
      setApplicationMenu: () => {
        state.menuSet = true;
      },
    },
    dialog: {
      showErrorBox: (title: string, body: string) => state.errorBoxes.push(`${title}: ${body}`),
      showMessageBox: () => Promise.resolve({ response: 0 }),
    },
    ipcMain: {
      on: (channel: string, fn: typeof state.ipc extends Map<string, infer F> ? F : never) => {
        state.ipc.set(channel, fn);
      },
    },
    session: {
      defaultSession: {
        setCertificateVerifyProc: (fn: typeof state.verifyProc) => {
          state.verifyProc = fn;
        },
        setPermissionRequestHandler: (fn: typeof state.permissionRequest) => {
          state.permissionRequest = fn;
        },
        setPermissionCheckHandler: () => undefined,
        webRequest: {
          onHeadersReceived: (fn: typeof state.onHeadersReceived) => {
            state.onHeadersReceived = fn;
          },
          onBeforeRequest: (fn: typeof state.onBeforeRequest) => {
            state.onBeforeRequest = fn;
          },
        },
      },
    },
    shell: { openPath: () => Promise.resolve('') },
  };
  return { state, module };
});

vi.mock('electron', () => fake.module);

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// Inside the repo so the bundle resolves node_modules and vitest applies the electron mock.
const buildDir = path.join(repoRoot, 'out', `.main-process-test-${process.pid}`);
const scratch = mkdtempSync(path.join(tmpdir(), 'blueline-main-test-'));
const { state } = fake;

let origin = '';
let bridge: BluelineBridge;

function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    // The pin is tested separately below; here only the HTTP behaviour matters.
    https
      .get(url, { headers, rejectUnauthorized: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body, type: String(res.headers['content-type']) }),
        );
      })
      .on('error', reject);
  });
}

function peerCertificatePem(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.end();
      const b64 = raw.toString('base64').replace(/(.{64})/g, '$1\n');
      resolve(`-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`);
    });
    socket.on('error', reject);
  });
}

const verify = (hostname: string, pem: string) =>
  new Promise<number>((resolve) =>
    state.verifyProc?.({ hostname, certificate: { data: pem } }, resolve),
  );

beforeAll(async () => {
  const r = spawnSync(
    path.join(repoRoot, 'node_modules/.bin/electron-vite'),
    ['build', '--outDir', buildDir],
    {
      cwd: repoRoot,
      encoding: 'utf8',
    },
  );
  if (r.status !== 0) throw new Error(`electron-vite build failed:\n${r.stdout}\n${r.stderr}`);
  state.userData = path.join(scratch, 'userData');
  state.appPath = scratch; // no cached Electron addon here: better-sqlite3 loads as installed
  await import(pathToFileURL(path.join(buildDir, 'main', 'index.js')).href);
  await vi.waitFor(
    () => {
      if (state.errorBoxes.length > 0) throw new Error(state.errorBoxes.join('\n'));
      expect(state.windows[0]?.loadedUrl).toBeDefined();
    },
    { timeout: 30_000, interval: 50 },
  );
  origin = new URL(state.windows[0]?.loadedUrl ?? '').origin;
  const answer: { senderFrame: { url: string }; returnValue?: unknown } = {
    senderFrame: { url: `${origin}/` },
  };
  state.ipc.get(BRIDGE_CONFIG_CHANNEL)?.(answer);
  bridge = answer.returnValue as BluelineBridge;
}, 120_000);

afterAll(() => {
  rmSync(buildDir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

describe('Electron main process (built bundle, fake electron, real service)', () => {
  it('starts sandboxed, single-instance, named, with a menu', () => {
    expect(state.names).toContain('Blueline');
    expect(state.sandboxEnabled).toBe(true);
    expect(state.singleInstanceAsked).toBe(true);
    expect(state.menuSet).toBe(true);
    expect(state.errorBoxes).toEqual([]);
  });

  it('starts the service on 127.0.0.1 with data under userData and serves the renderer', async () => {
    expect(origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(state.windows[0]?.loadedUrl).toBe(`${origin}/`);
    expect(existsSync(path.join(state.userData, 'service'))).toBe(true);
    const page = await get(`${origin}/`);
    expect(page.status).toBe(200);
    expect(page.type).toContain('text/html');
    expect(page.body).toContain('<div id="root">');
  });

  it('hands the page a working session key through the bridge, and only to our origin', async () => {
    expect(bridge.baseUrl).toBe(`${origin}/v1`);
    expect(bridge.apiKey).toMatch(/^sk_/);
    const authed = await get(`${bridge.baseUrl}/projects`, {
      authorization: `Bearer ${bridge.apiKey}`,
    });
    expect(authed.status).toBe(200);
    expect((await get(`${bridge.baseUrl}/projects`)).status).toBe(401);

    const foreign: { senderFrame: { url: string }; returnValue?: unknown } = {
      senderFrame: { url: 'https://evil.example/' },
    };
    state.ipc.get(BRIDGE_CONFIG_CHANNEL)?.(foreign);
    expect(foreign.returnValue).toBeNull();
  });

  it("pins the service's real certificate and rejects a look-alike", async () => {
    const port = Number(new URL(origin).port);
    const served = await peerCertificatePem(port);
    expect(await verify('127.0.0.1', served)).toBe(0);
    const impostor = await selfsigned.generate([{ name: 'commonName', value: '127.0.0.1' }], {
      keyType: 'ec',
      curve: 'P-256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
    });
    expect(await verify('127.0.0.1', impostor.cert)).toBe(-2);
    // Other hosts keep Chromium's own verification.
    expect(await verify('example.com', served)).toBe(-3);
  });

  it('creates the window with isolation, sandbox, no Node and the CommonJS preload', () => {
    const prefs = state.windows[0]?.options.webPreferences ?? {};
    expect(prefs).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
    });
    expect(String(prefs.preload)).toMatch(/[\\/]preload[\\/]index\.cjs$/);
    expect(existsSync(String(prefs.preload))).toBe(true);
  });

  it('denies new windows and foreign navigation', () => {
    const win = state.windows[0];
    expect(win?.windowOpenHandler?.({ url: `${origin}/x` })).toEqual({ action: 'deny' });
    const navigate = win?.contentsHandlers.get('will-navigate') as Handler | undefined;
    const foreign = { preventDefault: vi.fn() };
    const ours = { preventDefault: vi.fn() };
    (navigate as (e: unknown, url: string) => void)(foreign, 'https://evil.example/');
    (navigate as (e: unknown, url: string) => void)(ours, `${origin}/#/projects`);
    expect(foreign.preventDefault).toHaveBeenCalled();
    expect(ours.preventDefault).not.toHaveBeenCalled();
    const attach = { preventDefault: vi.fn() };
    (win?.contentsHandlers.get('will-attach-webview') as (e: unknown) => void)(attach);
    expect(attach.preventDefault).toHaveBeenCalled();
  });

  it('sets the CSP on responses and cancels requests to other origins', () => {
    let headers: Record<string, string[]> = {};
    state.onHeadersReceived?.(
      {
        url: `${origin}/`,
        method: 'GET',
        responseHeaders: { 'content-security-policy': ['default-src *'] },
      },
      (r) => {
        headers = (r as { responseHeaders: Record<string, string[]> }).responseHeaders;
      },
    );
    expect(headers['content-security-policy']).toBeUndefined();
    const csp = headers['Content-Security-Policy']?.[0] ?? '';
    expect(csp).toContain(`connect-src 'self' ${origin}`);
    expect(csp).toContain(`img-src 'self' ${origin} blob: data:`);

    const cancelled = (url: string) => {
      let cancel: boolean | undefined;
      state.onBeforeRequest?.({ url }, (r) => {
        cancel = (r as { cancel: boolean }).cancel;
      });
      return cancel;
    };
    expect(cancelled('https://evil.example/collect')).toBe(true);
    expect(cancelled('http://127.0.0.1:1/')).toBe(true);
    expect(cancelled(`${origin}/v1/projects`)).toBe(false);
    expect(cancelled('blob:https://127.0.0.1/abc')).toBe(false);
  });

  it('denies permissions except clipboard writes', () => {
    const ask = (p: string) =>
      new Promise<boolean>((resolve) => state.permissionRequest?.({}, p, resolve));
    return Promise.all([ask('media'), ask('geolocation'), ask('clipboard-sanitized-write')]).then(
      (r) => expect(r).toEqual([false, false, true]),
    );
  });

  it('stops the service before quitting', async () => {
    const event = { preventDefault: vi.fn() };
    fake.module.app.emit('before-quit', event);
    expect(event.preventDefault).toHaveBeenCalled();
    await vi.waitFor(() => expect(state.quitCalls).toBeGreaterThan(0), { timeout: 15_000 });
    // A fresh connection (not a kept-alive socket of Node's global agent, which the server
    // may have dropped a moment earlier: that reads as 'socket hang up') finds no listener.
    const port = Number(new URL(origin).port);
    await expect(
      new Promise((resolve, reject) => {
        const socket = net.connect({ host: '127.0.0.1', port }, () => {
          socket.destroy();
          resolve('connected');
        });
        socket.on('error', reject);
      }),
    ).rejects.toThrow(/ECONNREFUSED/);
  });
});
