// What crosses from the main process to the renderer: the service's base URL and a session
// API key, nothing else. Shared by main (answers) and preload (asks and exposes it as
// `window.blueline`); the renderer reads `window.blueline?.baseUrl` / `apiKey`.

/** Synchronous IPC channel the preload uses once, before any page script runs. */
export const BRIDGE_CONFIG_CHANNEL = 'blueline:bridge-config';

export interface BluelineBridge {
  /** `https://127.0.0.1:<port>/v1` */
  readonly baseUrl: string;
  /** Session key (`sk_…`) minted at start-up for the "Default" organization. */
  readonly apiKey: string;
}

export function isBluelineBridge(value: unknown): value is BluelineBridge {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.baseUrl === 'string' &&
    v.baseUrl.startsWith('https://') &&
    typeof v.apiKey === 'string' &&
    v.apiKey.length > 0
  );
}
