// Preload of the sandboxed window (built as CommonJS: sandboxed preloads cannot be ES modules).
// It exposes exactly `{ baseUrl, apiKey }` as a frozen `window.blueline` through the context
// bridge — no ipcRenderer, no Node, no functions — so page script can reach the service over
// HTTPS and nothing else in the main process.
import { contextBridge, ipcRenderer } from 'electron';
import { BRIDGE_CONFIG_CHANNEL, isBluelineBridge } from '../common/bridge';

// Synchronous on purpose: it runs once before the page's scripts, so the renderer can read
// `window.blueline` synchronously at start-up. The main process answers only frames of our origin.
const config: unknown = ipcRenderer.sendSync(BRIDGE_CONFIG_CHANNEL);

if (isBluelineBridge(config)) {
  contextBridge.exposeInMainWorld(
    'blueline',
    Object.freeze({ baseUrl: config.baseUrl, apiKey: config.apiKey }),
  );
} else {
  // The renderer then falls back to its browser-mode connection (page origin + #key=…).
  console.error('[blueline] preload: the main process did not provide the service address');
}
