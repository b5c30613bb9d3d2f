import { afterEach, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './harness';

let t: TestService | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

describe('service start-up', () => {
  it('starts its pool workers and warms each one up on the generated scanned sheet', async () => {
    const lines: string[] = [];
    const log = {
      info: (o: unknown, m?: string) => lines.push(`${m ?? ''} ${JSON.stringify(o)}`),
      warn: (o: unknown, m?: string) => lines.push(`WARN ${m ?? ''} ${JSON.stringify(o)}`),
      error: (o: unknown, m?: string) => lines.push(`ERROR ${m ?? ''} ${JSON.stringify(o)}`),
    };
    t = await startTestService({ workers: 2, warmWorkers: true, log });
    // Workers start with the service, before any task asks for one.
    expect(t.svc.pool.stats().workers).toBe(2);
    const deadline = Date.now() + 60_000;
    while (t.svc.pool.stats().warmedUp < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(t.svc.pool.stats()).toMatchObject({ warmedUp: 2, crashed: 0, busy: 0 });
    expect(t.svc.pool.stats().warmupError).toBeUndefined();
    await new Promise((r) => setTimeout(r, 50)); // the log line follows the stats
    expect(lines.some((l) => l.startsWith('workers warmed up') && l.includes('"workers":2'))).toBe(
      true,
    );
    // The API answers as usual.
    expect((await t.request('GET', '/v1/projects')).status).toBe(200);
  }, 90_000);

  it('does not start or warm workers when told not to (tests that never ingest)', async () => {
    t = await startTestService({ workers: 2, warmWorkers: false });
    await new Promise((r) => setTimeout(r, 200));
    expect(t.svc.pool.stats()).toMatchObject({ workers: 0, warmedUp: 0 });
  });
});
