// The locale and time zone of this window's times (src/present/timeText.ts): VS Code's display
// language, made precise by the system's region when it is the same language, and the extension
// host's time zone. The host names tabs and runs in it and hands it to each webview's page, so every
// surface says a moment in one form.
import * as vscode from 'vscode';
import type { SurfaceClock } from '../shared/protocol';
import { clockOf } from '../present/timeText';

let clock: SurfaceClock | undefined;

/** The window's clock, worked out once (the display language changes only with a restart). */
export function hostClock(): SurfaceClock {
  return (clock ??= clockOf(vscode.env.language));
}
