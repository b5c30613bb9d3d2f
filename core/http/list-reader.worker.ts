// The list reader thread (see list-reader.ts): answers ListRequestMessage with the page's UTF-8
// JSON bytes (transferred, not copied) or its error, one page at a time, from a read-only handle.
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
const utf8 = new TextEncoder();

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
    // TextEncoder gives the bytes their own ArrayBuffer (Buffer.from may slice a shared pool,
    // which must not be transferred).
    const body = utf8.encode(text);
    port.postMessage({ type: 'page', id: msg.id, body } satisfies ListResponseMessage, [
      body.buffer,
    ]);
    return;
  } catch (err) {
    reply = { type: 'error', id: msg.id, error: serializeListError(err) };
  }
  port.postMessage(reply);
});

port.postMessage({ type: 'ready' } satisfies ListResponseMessage);
