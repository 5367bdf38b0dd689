// The one error for input that cannot make a job (a bad flag, setting, argument or prompt file).
// The CLI prints it and exits 2; the extension shows it where the user acted.

export class UsageError extends Error {
  override readonly name = 'UsageError';
  /** The CLI flag it is about, when there is one (the extension names the setting or field instead). */
  readonly flag: string | undefined;

  constructor(message: string, flag?: string) {
    super(message);
    this.flag = flag;
  }
}
