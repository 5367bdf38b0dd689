// The one module that knows the UI toolkit. @vscode/webview-ui-toolkit is archived upstream; its
// successor is @vscode-elements/elements. Swapping means changing this file: the rest of the
// sidebar only uses the tag names and the small helpers below.
import {
  provideVSCodeDesignSystem,
  vsCodeBadge,
  vsCodeButton,
  vsCodeDivider,
  vsCodeDropdown,
  vsCodeOption,
  vsCodeProgressRing,
  vsCodeTextField,
} from '@vscode/webview-ui-toolkit';

export function registerToolkit(): void {
  provideVSCodeDesignSystem().register(
    vsCodeBadge(), vsCodeButton(), vsCodeDivider(), vsCodeDropdown(), vsCodeOption(), vsCodeProgressRing(), vsCodeTextField(),
  );
}

export const Tag = {
  button: 'vscode-button',
  dropdown: 'vscode-dropdown',
  option: 'vscode-option',
  textField: 'vscode-text-field',
  badge: 'vscode-badge',
  divider: 'vscode-divider',
  progressRing: 'vscode-progress-ring',
} as const;

export type ButtonAppearance = 'primary' | 'secondary' | 'icon';

export function button(label: string, appearance: ButtonAppearance = 'secondary', ariaLabel?: string): HTMLElement {
  const b = document.createElement(Tag.button);
  b.setAttribute('appearance', appearance);
  b.textContent = label;
  if (ariaLabel) b.setAttribute('aria-label', ariaLabel);
  return b;
}

export function numberField(label: string, value: number, min: number, max: number): HTMLElement & { value: string } {
  const f = document.createElement(Tag.textField) as HTMLElement & { value: string };
  f.setAttribute('type', 'number');
  f.setAttribute('min', String(min));
  f.setAttribute('max', String(max));
  f.setAttribute('size', '6');
  f.textContent = label;
  f.value = String(value);
  return f;
}

export function dropdown(): HTMLElement & { value: string } {
  return document.createElement(Tag.dropdown) as HTMLElement & { value: string };
}

export function option(value: string, label: string): HTMLElement {
  const o = document.createElement(Tag.option);
  o.setAttribute('value', value);
  o.textContent = label;
  return o;
}

export function badge(text: string): HTMLElement {
  const b = document.createElement(Tag.badge);
  b.textContent = text;
  return b;
}

export function divider(): HTMLElement {
  return document.createElement(Tag.divider);
}

export function spinner(): HTMLElement {
  return document.createElement(Tag.progressRing);
}

/** Toolkit buttons swallow `disabled` as an attribute. */
export function setDisabled(el: HTMLElement, disabled: boolean): void {
  if (disabled) el.setAttribute('disabled', '');
  else el.removeAttribute('disabled');
}
