import selfsigned from 'selfsigned';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildContentSecurityPolicy,
  certificateMatchesPin,
  isAllowedNavigation,
  originOf,
} from './security-policy';

const day = 24 * 60 * 60 * 1000;
const validity = {
  notBeforeDate: new Date(Date.now() - day),
  notAfterDate: new Date(Date.now() + 30 * day),
};
const loopbackSan = {
  name: 'subjectAltName' as const,
  altNames: [
    { type: 2 as const, value: 'localhost' },
    { type: 7 as const, ip: '127.0.0.1' },
  ],
};

async function makeCa(cn: string) {
  return selfsigned.generate([{ name: 'commonName', value: cn }], {
    ...validity,
    keyType: 'ec',
    curve: 'P-256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, digitalSignature: true, critical: true },
    ],
  });
}

async function makeLeaf(ca: { private: string; cert: string }, cn = '127.0.0.1') {
  return selfsigned.generate([{ name: 'commonName', value: cn }], {
    ...validity,
    keyType: 'ec',
    curve: 'P-256',
    ca: { key: ca.private, cert: ca.cert },
    extensions: [{ name: 'basicConstraints', cA: false }, loopbackSan],
  });
}

describe('certificateMatchesPin', () => {
  let ourCa: Awaited<ReturnType<typeof makeCa>>;
  let ourLeaf: Awaited<ReturnType<typeof makeLeaf>>;
  let ourSelfSignedLeaf: Awaited<ReturnType<typeof makeCa>>;
  let impostorCa: Awaited<ReturnType<typeof makeCa>>;
  let impostorLeaf: Awaited<ReturnType<typeof makeLeaf>>;

  beforeAll(async () => {
    ourCa = await makeCa('Blueline local CA');
    ourLeaf = await makeLeaf(ourCa);
    // The same subject and SANs as ours, from a different key: what another loopback
    // process would present to impersonate the service.
    impostorCa = await makeCa('Blueline local CA');
    impostorLeaf = await makeLeaf(impostorCa);
    ourSelfSignedLeaf = await selfsigned.generate([{ name: 'commonName', value: '127.0.0.1' }], {
      ...validity,
      keyType: 'ec',
      curve: 'P-256',
      extensions: [loopbackSan],
    });
  });

  it('accepts a leaf issued by the pinned CA for 127.0.0.1', () => {
    expect(certificateMatchesPin(ourLeaf.cert, ourCa.cert, '127.0.0.1')).toBe(true);
  });

  it('accepts the pinned certificate itself when the service uses a self-signed leaf', () => {
    expect(certificateMatchesPin(ourSelfSignedLeaf.cert, ourSelfSignedLeaf.cert, '127.0.0.1')).toBe(
      true,
    );
  });

  it('rejects a look-alike chain signed by another key', () => {
    expect(certificateMatchesPin(impostorLeaf.cert, ourCa.cert, '127.0.0.1')).toBe(false);
    expect(certificateMatchesPin(impostorCa.cert, ourCa.cert, '127.0.0.1')).toBe(false);
  });

  it('rejects our leaf for a host it does not name', () => {
    expect(certificateMatchesPin(ourLeaf.cert, ourCa.cert, '10.0.0.1')).toBe(false);
    expect(certificateMatchesPin(ourLeaf.cert, ourCa.cert, 'example.com')).toBe(false);
    expect(certificateMatchesPin(ourLeaf.cert, ourCa.cert, 'localhost')).toBe(true);
  });

  it('rejects our leaf outside its validity window', () => {
    expect(
      certificateMatchesPin(ourLeaf.cert, ourCa.cert, '127.0.0.1', new Date(Date.now() + 60 * day)),
    ).toBe(false);
  });

  it('rejects garbage', () => {
    expect(certificateMatchesPin('not a certificate', ourCa.cert)).toBe(false);
    expect(certificateMatchesPin(ourLeaf.cert, '')).toBe(false);
  });
});

describe('navigation guard', () => {
  const allowed = ['https://127.0.0.1:49152'];

  it('allows only documents of our origin', () => {
    expect(isAllowedNavigation('https://127.0.0.1:49152/#/projects', allowed)).toBe(true);
    expect(isAllowedNavigation('https://127.0.0.1:49153/', allowed)).toBe(false);
    expect(isAllowedNavigation('http://127.0.0.1:49152/', allowed)).toBe(false);
    expect(isAllowedNavigation('https://example.com/', allowed)).toBe(false);
    expect(isAllowedNavigation('file:///etc/passwd', allowed)).toBe(false);
    expect(isAllowedNavigation('javascript:alert(1)', allowed)).toBe(false);
    expect(isAllowedNavigation('not a url', allowed)).toBe(false);
  });

  it('treats opaque origins as no origin', () => {
    expect(originOf('data:text/html,hi')).toBeNull();
    expect(originOf('https://127.0.0.1:8443/v1/projects')).toBe('https://127.0.0.1:8443');
  });
});

describe('buildContentSecurityPolicy', () => {
  const directive = (csp: string, name: string) =>
    csp
      .split('; ')
      .find((d) => d.startsWith(`${name} `))
      ?.slice(name.length + 1);

  it('limits network, scripts and images to the service', () => {
    const csp = buildContentSecurityPolicy({ serviceOrigin: 'https://127.0.0.1:49152' });
    expect(directive(csp, 'default-src')).toBe("'none'");
    expect(directive(csp, 'connect-src')).toBe("'self' https://127.0.0.1:49152");
    expect(directive(csp, 'img-src')).toBe("'self' https://127.0.0.1:49152 blob: data:");
    expect(directive(csp, 'script-src')).toBe("'self' https://127.0.0.1:49152");
    expect(directive(csp, 'object-src')).toBe("'none'");
    expect(directive(csp, 'frame-ancestors')).toBe("'none'");
    expect(csp).not.toContain('unsafe-eval');
  });

  it('opens the dev server and its websocket only in dev', () => {
    const csp = buildContentSecurityPolicy({
      serviceOrigin: 'https://127.0.0.1:49152',
      devServerOrigin: 'http://localhost:5173',
    });
    expect(directive(csp, 'connect-src')).toBe(
      "'self' https://127.0.0.1:49152 http://localhost:5173 ws://localhost:5173",
    );
    expect(directive(csp, 'script-src')).toContain("'unsafe-inline'");
  });
});
