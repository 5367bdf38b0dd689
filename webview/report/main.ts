// The report webview's entry point: posts `ready` first (the host queues until then), draws the
// state it was created with, then follows the host's messages.
import type { ReportHostMessage } from '../../src/shared/protocol';
import { ReportApp } from './app';
import { installDrop } from './drop';
import { post } from './vscodeApi';

const root = document.getElementById('app') ?? document.body.appendChild(document.createElement('main'));
const app = new ReportApp(root);
// a result file dropped on the page (Shift held) opens in the host; this line says when it cannot
const dropStatus = document.body.appendChild(document.createElement('p'));
dropStatus.className = 'sub drop-status';
dropStatus.setAttribute('role', 'status');
installDrop(dropStatus);

window.addEventListener('message', (e: MessageEvent) => {
  const msg = e.data as ReportHostMessage | undefined;
  if (!msg || typeof msg !== 'object' || typeof (msg as { type?: unknown }).type !== 'string') return;
  app.handle(msg);
});

window.addEventListener('error', (e) => {
  // an exception must not leave a blank page
  if (!root.firstElementChild || document.body.dataset.view === 'empty') app.showError(`The report failed: ${e.message}`);
});

function initial(): void {
  const raw = document.body.dataset.state;
  if (!raw) { app.showPlaceholder('Waiting for a run…'); return; }
  let state: { kind?: string; run?: unknown; compareWith?: unknown; message?: string; path?: string };
  try {
    state = JSON.parse(raw) as typeof state;
  } catch {
    app.showError('The panel state could not be read.');
    return;
  }
  if (state.kind === 'run') app.showRun(state.run, state.compareWith);
  else if (state.kind === 'error') app.showError(state.message ?? 'Unknown error', state.path);
  else app.showPlaceholder(state.kind === 'loading' ? 'Loading the run…' : 'Run a profile to see its report here.');
}

// `ready` first, as the host queues until then: a page that fails while drawing its first state must
// still get the host's messages (the host answers `ready` with the state again)
post('ready', {});
initial();
