// A benchmark result dropped on the report opens it. VS Code lets a drop reach a webview only while
// Shift is held (otherwise the workbench takes it and opens the file in an editor: its webview
// shell, pre/index.html, tells the workbench of a drag of files unless Shift is down). The page
// reads no file: it sends what the drop names (URIs, or paths) and the host imports them.
//
// What a drop carries (VS Code's Explorer and editor tabs): `text/uri-list` (one URI: VS Code cuts
// it to the first), `resourceurls` (a JSON array of every URI dragged) and `codefiles` (a JSON array
// of paths); a file from the operating system's file manager: `Files` only, with no path in a page.
import { IMPORT_TOOL_NAMES } from '../../src/engine/core/types';
import { post } from './vscodeApi';

export const DROP_HINT = `Drop a ${IMPORT_TOOL_NAMES} result here (hold Shift) to open it.`;
const NO_PATH = 'This drop names no file (a page is not given the path of a file from outside VS Code): drop it from VS Code\'s Explorer, or use "LLM Profiler: Open benchmark result…".';

/** The drag carries something that names a file. */
function namesFiles(dt: DataTransfer | null): boolean {
  if (!dt) return false;
  const types = Array.from(dt.types, (t) => t.toLowerCase());
  return types.some((t) => t === 'text/uri-list' || t === 'resourceurls' || t === 'codefiles' || t === 'files');
}

function jsonList(dt: DataTransfer, type: string): string[] {
  try {
    const v: unknown = JSON.parse(dt.getData(type) || 'null');
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.length > 0) : [];
  } catch {
    return [];
  }
}

/** The files a drop names: every URI VS Code put in it, else the one of text/uri-list, else its paths. */
function droppedFiles(dt: DataTransfer): string[] {
  const all = jsonList(dt, 'resourceurls');
  if (all.length) return [...new Set(all)];
  const listed = dt.getData('text/uri-list').split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  if (listed.length) return [...new Set(listed)];
  return [...new Set(jsonList(dt, 'codefiles'))];
}

/** Listens on the whole page; `status` says what happened to a drop that could not be sent (a role=status line). */
export function installDrop(status: HTMLElement): void {
  const over = (e: DragEvent) => {
    if (!namesFiles(e.dataTransfer)) return;
    e.preventDefault();
    e.dataTransfer!.dropEffect = 'copy';
    document.body.dataset.dropping = 'true';
  };
  window.addEventListener('dragenter', over);
  window.addEventListener('dragover', over);
  window.addEventListener('dragleave', (e) => { if (!e.relatedTarget) delete document.body.dataset.dropping; });
  window.addEventListener('drop', (e) => {
    delete document.body.dataset.dropping;
    const dt = e.dataTransfer;
    if (!dt || !namesFiles(dt)) return;
    e.preventDefault();
    const files = droppedFiles(dt);
    if (files.length === 0) { status.textContent = NO_PATH; return; }
    status.textContent = `Opening ${files.length === 1 ? 'the dropped file' : `${files.length} dropped files`}…`;
    // the host shows each run in its own panel, or says why not; this line has done its work by then
    setTimeout(() => { status.textContent = ''; }, 8000);
    post('openDropped', { files });
  });
}
