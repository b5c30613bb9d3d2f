// A webhook delivery loop in a process of its own, as each API process of a team server runs one:
// `node --import tsx webhook-loop.test-support.ts <postgres-url | sqlite-file> '<options json>'`.
// Prints JSON lines on stdout ({ready}, and each log line of the loop, e.g. 'Webhook delivered'
// with its delivery id) until killed. For core/test/webhook-claims.test.ts.
import { openDatabase, type Db } from '../store/db';
import { openPostgres } from '../store/pg-db';
import { createWebhookDelivery } from './webhook-delivery';

const [target, optionsJson] = process.argv.slice(2);
if (!target)
  throw new Error('usage: webhook-loop.test-support.ts <postgres-url|sqlite-file> [options]');
const say = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);
const db: Db = /^postgres(ql)?:\/\//.test(target)
  ? await openPostgres(target, { migrate: false, max: 4 })
  : openDatabase(target);
const line = (level: string) => (o: object, m?: string) => {
  const { err, ...rest } = o as { err?: unknown };
  say({ level, msg: m, ...rest, ...(err ? { err: String(err) } : {}) });
};
const loop = createWebhookDelivery({
  db,
  log: { info: line('info'), warn: line('warn'), error: line('error') },
  options: optionsJson ? (JSON.parse(optionsJson) as object) : {},
});
loop.start();
// The loop's timer does not hold the process (a service's server does); on SQLite nothing else would.
const alive = setInterval(() => {}, 3600_000);
say({ ready: process.pid });
process.on('SIGTERM', () => {
  void loop.stop().then(async () => {
    await db.close();
    clearInterval(alive);
    process.exit(0);
  });
});
