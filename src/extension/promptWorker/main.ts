// The prompt reader's worker thread (bundled as dist/promptWorker.js, started by client.ts): reads the
// editor's prompt files off the extension host's thread, one request at a time, so that a large YAML
// file (about a second per MB) never freezes the editor. Its environment is empty: a trusted
// workspace's request carries the host's (request.ts).
import { parentPort } from 'node:worker_threads';
import { parsePromptFile } from '../../engine/prompts/promptFiles';
import { anyPulledIn, promptAccess } from '../../engine/prompts/siblingFiles';
import { readDocument, refusedParse, type FromPromptWorker, type ToPromptWorker } from './request';

const parts = { parsePromptFile, promptAccess, anyPulledIn };

function post(message: FromPromptWorker): void {
  parentPort!.postMessage(message);
}

parentPort?.on('message', (m: ToPromptWorker) => {
  const parse = readDocument(parts, m.request);
  try {
    post({ id: m.id, parse });
  } catch (e) {
    // a parse is plain data; should it ever hold something that cannot be cloned, say so at the lens
    post({ id: m.id, parse: refusedParse(`could not read this prompt file: ${(e as Error).message}`) });
  }
});
post({ ready: true });
