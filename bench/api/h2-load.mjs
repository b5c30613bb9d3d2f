// The HTTP/2 client of bench-api.ts (BENCH_PROTOCOL=h2), in a worker thread so that it does not
// share the service's event loop (as autocannon's worker). One connection (as a browser uses),
// `concurrency` requests in flight on it at all times for `duration` s; answers with the
// latencies. Plain JS: a worker needs no loader.
import http2 from 'node:http2';
import { parentPort, workerData } from 'node:worker_threads';

const { url, key, ca, concurrency, duration } = workerData;
const target = new URL(url);
const session = http2.connect(target.origin, { ca });
session.on('error', (err) => parentPort.postMessage({ error: String(err) }));

const latencies = [];
let bytes = 0;
let errors = 0;
let running = 0;
const started = performance.now();
const until = started + duration * 1000;

function one() {
  running++;
  const t0 = performance.now();
  const stream = session.request({
    ':path': target.pathname + target.search,
    authorization: `Bearer ${key}`,
  });
  let status = 0;
  stream.on('response', (h) => (status = Number(h[':status'])));
  stream.on('data', (c) => (bytes += c.length));
  stream.on('end', () => done(t0, status));
  stream.on('error', () => done(t0, 0));
  stream.end();
}

function done(t0, status) {
  running--;
  if (status >= 200 && status < 300) latencies.push(performance.now() - t0);
  else errors++;
  if (performance.now() < until) one();
  else if (running === 0) {
    const wall = (performance.now() - started) / 1000;
    session.close();
    parentPort.postMessage({ latencies, bytes, errors, wall, alpn: session.alpnProtocol });
  }
}

session.once('connect', () => {
  for (let i = 0; i < concurrency; i++) one();
});
