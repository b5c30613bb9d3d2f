// Pure security decisions of the desktop shell: which URLs a window may show, the
// Content-Security-Policy it runs under, and which TLS certificate counts as "our service".
// No Electron import here, so every rule is unit-tested under plain Node
// (security-policy.test.ts); electron/main/index.ts only wires these into Electron's hooks.
import { X509Certificate } from 'node:crypto';

/** The loopback host the embedded service listens on (contract §1: desktop default host). */
export const SERVICE_HOST = '127.0.0.1';

/** `new URL(url).origin`, or null for anything unparsable (which is then never allowed). */
export function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    // file:, data:, about: … have the opaque origin "null".
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * True when a frame may navigate to `url`: only documents from our own origins (the service
 * that serves the built renderer, plus the Vite dev server in `electron-vite dev`).
 */
export function isAllowedNavigation(url: string, allowedOrigins: readonly string[]): boolean {
  const origin = originOf(url);
  return origin !== null && allowedOrigins.includes(origin);
}

export interface CspOptions {
  /** The service's origin, e.g. `https://127.0.0.1:49152`: the renderer's scripts and API. */
  serviceOrigin: string;
  /** Vite dev server origin during `electron-vite dev` (needs inline/eval scripts and a websocket). */
  devServerOrigin?: string;
}

/**
 * The policy every document in the window runs under. Scripts only from our origin; network
 * only to our service (the API, SSE, signed file URLs); images from our service plus blob:
 * and data: (Konva draws tiles decoded into object URLs). No plugins, frames, forms or <base>.
 */
export function buildContentSecurityPolicy({ serviceOrigin, devServerOrigin }: CspOptions): string {
  const self = devServerOrigin
    ? `'self' ${serviceOrigin} ${devServerOrigin}`
    : `'self' ${serviceOrigin}`;
  const devSocket = devServerOrigin ? ` ${devServerOrigin.replace(/^http/, 'ws')}` : '';
  const directives: Array<[string, string]> = [
    ['default-src', "'none'"],
    // Vite's dev client injects an inline preamble for React refresh; production has none.
    ['script-src', devServerOrigin ? `${self} 'unsafe-inline'` : self],
    // React style props go through CSSOM (allowed by CSP); 'unsafe-inline' covers libraries
    // that inject <style> elements. Styles cannot run code.
    ['style-src', `${self} 'unsafe-inline'`],
    ['img-src', `${self} blob: data:`],
    ['font-src', `${self} data:`],
    ['connect-src', `${self}${devSocket}`],
    ['worker-src', `${self} blob:`],
    ['media-src', "'none'"],
    ['object-src', "'none'"],
    ['frame-src', "'none'"],
    ['frame-ancestors', "'none'"],
    ['form-action', "'none'"],
    ['base-uri', "'none'"],
  ];
  return directives.map(([name, value]) => `${name} ${value}`).join('; ');
}

/**
 * Certificate pinning for the embedded service. `presentedPem` is the leaf certificate
 * Chromium received (PEM, as in Electron's `Certificate.data`); `servicePem` is the service's
 * `caCertPem`. The leaf is accepted when it is that exact certificate (a self-signed leaf) or
 * is issued and signed by it (a local CA), is valid now, and names `hostname`. Anything else —
 * another self-signed certificate with the same subject, an expired one, one for another
 * host — is rejected, so nothing else on loopback can impersonate the service.
 */
export function certificateMatchesPin(
  presentedPem: string,
  servicePem: string,
  hostname: string = SERVICE_HOST,
  now: Date = new Date(),
): boolean {
  let leaf: X509Certificate;
  let pinned: X509Certificate;
  try {
    leaf = new X509Certificate(presentedPem);
    pinned = new X509Certificate(servicePem);
  } catch {
    return false;
  }
  const sameCertificate = leaf.raw.equals(pinned.raw);
  const issuedByPinned =
    sameCertificate || (leaf.checkIssued(pinned) && leaf.verify(pinned.publicKey));
  if (!issuedByPinned) return false;
  const t = now.getTime();
  if (t < Date.parse(leaf.validFrom) || t > Date.parse(leaf.validTo)) return false;
  const isIp = /^[\d.]+$/.test(hostname) || hostname.includes(':');
  return (isIp ? leaf.checkIP(hostname) : leaf.checkHost(hostname)) !== undefined;
}
