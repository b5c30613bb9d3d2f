// The list reader thread (see list-reader.ts): answers ListRequestMessage with the page's JSON
// text or its error, one page at a time, from a read-only handle.
import { parentPort, workerData } from 'node:worker_threads';
import { UrlSigner } from '../blobs/signed-url';
import { openReadOnlyDatabase } from '../store/read-only-db';
import { CursorCodec } from './cursor';
import { blobUrlSigner, originContext } from './deps';
import { runListJson } from './list-engine';
import {
  serializeListError,
  type ListReaderWorkerData,
  type ListRequestMessage,
  type ListResponseMessage,
} from './list-reader';

const port = parentPort;
if (!port)
  throw new Error('list-reader.worker.ts must run in a worker thread (see list-reader.ts).');

const data = workerData as ListReaderWorkerData;
const db = openReadOnlyDatabase(data.dbFile);
const cursors = new CursorCodec(Buffer.from(data.cursorSecret));
// The same secret and default options as the service's signer: the same URLs, byte for byte.
const signedUrl = blobUrlSigner(new UrlSigner(Buffer.from(data.urlSecret)));

port.on('message', (msg: ListRequestMessage) => {
  let reply: ListResponseMessage;
  try {
    const text = runListJson(msg.endpoint, {
      organizationId: msg.organizationId,
      query: msg.query,
      db,
      cursors,
      serialize: originContext(signedUrl, msg.origin),
    });
    // Sent as a string (copied into the HTTP thread's heap), not as transferred bytes: a 291 KiB
    // ArrayBuffer per page counts as external memory there and tripled its full (mark-compact)
    // GCs in bench/api (127 vs 42 in one run), which cost more than the UTF-8 encoding it saves.
    reply = { type: 'page', id: msg.id, body: text };
  } catch (err) {
    reply = { type: 'error', id: msg.id, error: serializeListError(err) };
  }
  port.postMessage(reply);
});

port.postMessage({ type: 'ready' } satisfies ListResponseMessage);
