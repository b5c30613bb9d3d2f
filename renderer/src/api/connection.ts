// Where the API lives and which key to send.
//
// Electron: the preload exposes `window.blueline = { baseUrl, apiKey }` (nothing else).
// Browser mode: `blueline serve` serves this bundle at https://host:port/ and prints a link
// `https://host:port/#key=sk_…`. The key is read from the fragment (never sent to a server),
// kept in sessionStorage for reloads of this tab, and removed from the address bar so it does
// not linger in history or get copied with the URL.

export interface Connection {
  baseUrl: string;
  apiKey: string;
}

declare global {
  interface Window {
    blueline?: { baseUrl: string; apiKey: string };
  }
}

const STORAGE_KEY = 'blueline.apiKey';

/** Splits `#key=sk_…&x=y` into the key and the remaining fragment (`#x=y`, or '' when empty). */
export function takeKeyFromHash(hash: string): { key: string | null; rest: string } {
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  if (!body.startsWith('key=') && !body.includes('&key=')) return { key: null, rest: hash };
  const params = new URLSearchParams(body);
  const key = params.get('key');
  params.delete('key');
  const restBody = params.toString();
  return { key: key && key.length > 0 ? key : null, rest: restBody ? `#${restBody}` : '' };
}

export function resolveConnection(): Connection | null {
  if (window.blueline?.baseUrl && window.blueline.apiKey) {
    return { baseUrl: window.blueline.baseUrl.replace(/\/+$/, ''), apiKey: window.blueline.apiKey };
  }
  const { key, rest } = takeKeyFromHash(window.location.hash);
  if (key) {
    sessionStorage.setItem(STORAGE_KEY, key);
    const clean = window.location.pathname + window.location.search + (rest || '#/');
    window.history.replaceState(null, '', clean);
  }
  const stored = sessionStorage.getItem(STORAGE_KEY);
  if (!stored) return null;
  return { baseUrl: `${window.location.origin}/v1`, apiKey: stored };
}

export function saveKey(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key.trim());
}
