// What one render of a prompt template may spend. The CodeLens renders a prompt file on the extension
// host's thread as soon as it is opened (untrusted workspaces too), so a template that loops for ever
// (nested `range()`s, mustache sections nested over a list, a macro calling itself twice) or grows a
// string by doubling must stop, refused with the reason, not freeze the editor. Counted: steps (nodes
// evaluated, loop turns, items made), the characters written and the items in one list; and the
// clock, read every few steps, since a step is not a fixed cost. Every renderer counts into one.

export interface RenderLimits {
  /** Nodes evaluated, loop turns and items made, together. */
  readonly steps: number;
  /** Characters: of the rendered text, and of any one value made on the way. */
  readonly chars: number;
  /** Items in any one list made on the way. */
  readonly items: number;
  /** Wall time, milliseconds. */
  readonly ms: number;
}

/**
 * A legitimate prompt renders in thousands of steps and a few milliseconds; a rendered prompt is at
 * most as large as the largest prompt file read (MAX_PROMPT_FILE_BYTES). The time bound keeps a
 * CodeLens refresh under a second even when it reads the file twice (with and without the answers).
 */
export const RENDER_LIMITS: RenderLimits = { steps: 2_000_000, chars: 8 * 1024 * 1024, items: 1_000_000, ms: 250 };

/** A render stopped by its budget; the message says which bound and ends with "refused". */
export class RenderLimitError extends Error {
  override readonly name = 'RenderLimitError';
}

/** Read the clock after this many steps (performance.now() costs as much as a few steps). */
const CLOCK_EVERY = 64;

const grouped = (n: number) => n.toLocaleString('en-US');

export class RenderBudget {
  #steps = 0;
  #sinceClock = 0;
  #written = 0;
  readonly #deadline: number;

  constructor(readonly limits: RenderLimits = RENDER_LIMITS) {
    this.#deadline = performance.now() + limits.ms;
  }

  /** Spends `n` steps; throws when the steps or the time are spent. */
  step(n = 1): void {
    this.#steps += n;
    if (this.#steps > this.limits.steps) {
      throw new RenderLimitError(`it takes more than ${grouped(this.limits.steps)} steps to render (a loop or a recursion without a small bound): refused`);
    }
    this.#sinceClock += n;
    if (this.#sinceClock >= CLOCK_EVERY) {
      this.#sinceClock = 0;
      if (performance.now() > this.#deadline) throw new RenderLimitError(`it takes more than ${grouped(this.limits.ms)} ms to render: refused`);
    }
  }

  /** Checks a value about to be made or printed that is `n` characters long. */
  chars(n: number): void {
    if (n > this.limits.chars) throw new RenderLimitError(`it renders more than ${grouped(this.limits.chars)} characters: refused`);
  }

  /**
   * Counts `n` characters written on the way (text and values, over the whole render, before they are
   * joined): bounds the memory a loop that writes a long value many times takes before its end.
   * Twice the characters a render may have: a macro's text is written again where it is called.
   */
  write(n: number): void {
    this.#written += n;
    if (this.#written > 2 * this.limits.chars) throw new RenderLimitError(`it writes more than ${grouped(2 * this.limits.chars)} characters while rendering: refused`);
  }

  /** Checks a list about to be made with `n` items. */
  items(n: number): void {
    if (n > this.limits.items) throw new RenderLimitError(`it makes a list of more than ${grouped(this.limits.items)} items: refused`);
  }
}
