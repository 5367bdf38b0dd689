// The sidebar's controls, in one module: native elements styled with VS Code's theme variables
// (media/sidebar.css). They replace the archived @vscode/webview-ui-toolkit, whose web components keep
// their real controls in shadow roots (aria-pressed, aria-invalid and aria-describedby set on the host
// never reach them), change a closed dropdown's value with the arrow keys, and carry an inline style
// the webview's CSP refuses.

export type ButtonAppearance = 'primary' | 'secondary' | 'link';

/** A button; `ariaLabel`, when given, must start with the visible label (what a voice user says). */
export function button(label: string, appearance: ButtonAppearance = 'secondary', ariaLabel?: string): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = `btn ${appearance}`;
  b.textContent = label;
  if (ariaLabel) b.setAttribute('aria-label', ariaLabel);
  return b;
}

export interface NumberField {
  /** The label and the input, together (id `field-<key>`). */
  readonly wrap: HTMLElement;
  readonly input: HTMLInputElement;
}

/** `decimal`: any number in range (a rate, a speed), not only whole ones. */
export function numberField(key: string, label: string, value: number, min: number, max: number, decimal = false): NumberField {
  const wrap = document.createElement('div');
  wrap.className = 'field';
  wrap.id = `field-${key}`;
  const input = document.createElement('input');
  input.type = 'number';
  input.id = `input-${key}`;
  input.min = String(min);
  input.max = String(max);
  input.step = decimal ? 'any' : '1';
  input.inputMode = decimal ? 'decimal' : 'numeric';
  input.value = String(value);
  const l = document.createElement('label');
  l.htmlFor = input.id;
  l.textContent = label;
  wrap.append(l, input);
  return { wrap, input };
}

/** A labelled one-line text input (a file's path), as numberField's (id `field-<key>`, input `input-<key>`). */
export function textField(key: string, label: string, value = ''): NumberField {
  const wrap = document.createElement('div');
  wrap.className = 'field';
  wrap.id = `field-${key}`;
  const input = document.createElement('input');
  input.type = 'text';
  input.id = `input-${key}`;
  input.value = value;
  input.spellcheck = false;
  input.autocomplete = 'off';
  const l = document.createElement('label');
  l.htmlFor = input.id;
  l.textContent = label;
  wrap.append(l, input);
  return { wrap, input };
}

/** A labelled native select (id `field-<key>`, select `input-<key>`). */
export function selectField(key: string, label: string, options: readonly (readonly [string, string])[]): { readonly wrap: HTMLElement; readonly input: HTMLSelectElement } {
  const wrap = document.createElement('div');
  wrap.className = 'field';
  wrap.id = `field-${key}`;
  const input = select();
  input.id = `input-${key}`;
  input.append(...options.map(([v, l]) => option(v, l)));
  const l = document.createElement('label');
  l.htmlFor = input.id;
  l.textContent = label;
  wrap.append(l, input);
  return { wrap, input };
}

export function select(): HTMLSelectElement {
  return document.createElement('select');
}

export function option(value: string, label: string, disabled = false): HTMLOptionElement {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = label;
  o.disabled = disabled;
  return o;
}

export function badge(text: string): HTMLElement {
  const b = document.createElement('span');
  b.className = 'badge';
  b.textContent = text;
  return b;
}

export function divider(): HTMLElement {
  const d = document.createElement('hr');
  d.className = 'divider';
  return d;
}

/** A busy indicator: decoration only (the text beside it says what is happening). */
export function spinner(): HTMLElement {
  const s = document.createElement('span');
  s.className = 'spinner';
  s.setAttribute('aria-hidden', 'true');
  return s;
}

export function setDisabled(el: HTMLButtonElement | HTMLInputElement, disabled: boolean): void {
  el.disabled = disabled;
}
