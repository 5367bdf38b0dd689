// The input box an endpoint URL is typed in: "host:port" taken as http://, a wrong URL said at once,
// and whether anything answers there checked as it is typed (after a pause) and again on Enter, so
// that a dead port is said at this step, with the chance to fix it, not after the workload pick.
import * as vscode from 'vscode';
import { withScheme } from '../jobs/urls';

export interface UrlBoxOptions {
  readonly title: string;
  readonly prompt: string;
  readonly placeHolder?: string;
  readonly value?: string;
  readonly ignoreFocusOut?: boolean;
  /** What is wrong with the URL as taken (scheme added); undefined when nothing is. */
  problem(url: string): string | undefined;
  /** Why nothing answers at the URL (a sentence), or undefined when something does. */
  unreachable(url: string): Promise<string | undefined>;
  /**
   * 'block': a URL where nothing answers is not taken (fix it, or Escape); 'warn': said, and Enter
   * again takes it (`takeAnyway` says what happens then).
   */
  readonly whenUnreachable: 'block' | 'warn';
  readonly takeAnyway?: string;
}

/** How long typing pauses before the URL is checked. */
const CHECK_AFTER_MS = 400;

/** Asks for a URL (returned with its scheme); undefined when the user escaped. */
export function askUrl(o: UrlBoxOptions): Promise<string | undefined> {
  const box = vscode.window.createInputBox();
  box.title = o.title;
  box.prompt = o.prompt;
  box.placeholder = o.placeHolder ?? '';
  box.value = o.value ?? '';
  box.ignoreFocusOut = o.ignoreFocusOut ?? false;
  /** Each URL's answer: why nothing answers, or null when something does. */
  const answers = new Map<string, string | null>();
  const check = async (url: string, fresh: boolean): Promise<string | null> => {
    const known = answers.get(url);
    if (known !== undefined && !(fresh && known !== null)) return known;
    const why = (await o.unreachable(url)) ?? null;
    answers.set(url, why);
    return why;
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  let warnedFor: string | undefined;
  let settled = false;
  return new Promise<string | undefined>((resolve) => {
    const finish = (value: string | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
      box.dispose();
    };
    const current = () => withScheme(box.value);
    const changed = (v: string): void => {
      clearTimeout(timer);
      warnedFor = undefined;
      const url = withScheme(v);
      const problem = url ? o.problem(url) : undefined;
      box.validationMessage = problem ? { message: problem, severity: vscode.InputBoxValidationSeverity.Error } : undefined;
      if (!url || problem) return;
      timer = setTimeout(() => {
        void check(url, false).then((why) => {
          if (!settled && why !== null && current() === url && !box.validationMessage) {
            box.validationMessage = { message: why, severity: vscode.InputBoxValidationSeverity.Warning };
          }
        });
      }, CHECK_AFTER_MS);
    };
    box.onDidChangeValue(changed);
    box.onDidAccept(async () => {
      const url = current();
      if (!url || o.problem(url)) return;
      clearTimeout(timer);
      box.busy = true;
      const why = await check(url, true);
      box.busy = false;
      if (settled || current() !== url) return;
      if (why === null || (o.whenUnreachable === 'warn' && warnedFor === url)) { finish(url); return; }
      warnedFor = url;
      box.validationMessage = o.whenUnreachable === 'warn'
        ? { message: `${why}. ${o.takeAnyway ?? 'Press Enter again to use it anyway.'}`, severity: vscode.InputBoxValidationSeverity.Warning }
        : { message: `${why}: start the server, or fix the URL.`, severity: vscode.InputBoxValidationSeverity.Error };
    });
    box.onDidHide(() => finish(undefined));
    box.show();
    // a value given to edit (Edit endpoint) is checked as if typed
    if (box.value) changed(box.value);
  });
}
