// Colours come only from VS Code's theme variables, read at runtime; when the body's theme class
// changes (vscode-light / vscode-dark / vscode-high-contrast) they are read again and everything redraws.

export interface Theme {
  readonly kind: 'light' | 'dark' | 'high-contrast' | 'high-contrast-light';
  readonly background: string;
  readonly foreground: string;
  readonly muted: string;
  readonly lines: string;
  readonly focus: string;
  readonly blue: string;
  readonly green: string;
  readonly yellow: string;
  readonly orange: string;
  readonly red: string;
  readonly purple: string;
  readonly fontFamily: string;
  readonly fontSize: number;
}

function v(style: CSSStyleDeclaration, name: string, fallback: string): string {
  const s = style.getPropertyValue(name).trim();
  return s || fallback;
}

export function readTheme(): Theme {
  const body = document.body;
  const style = getComputedStyle(body);
  const cls = body.classList;
  const kind: Theme['kind'] = cls.contains('vscode-high-contrast-light') ? 'high-contrast-light'
    : cls.contains('vscode-high-contrast') ? 'high-contrast'
    : cls.contains('vscode-light') ? 'light' : 'dark';
  // a fallback only when a variable is missing altogether (never in VS Code): the text colour
  const fg = v(style, '--vscode-editor-foreground', v(style, '--vscode-foreground', style.color || 'gray'));
  return {
    kind,
    background: v(style, '--vscode-editor-background', style.backgroundColor || 'transparent'),
    foreground: v(style, '--vscode-charts-foreground', fg),
    muted: v(style, '--vscode-descriptionForeground', fg),
    lines: v(style, '--vscode-charts-lines', fg),
    focus: v(style, '--vscode-focusBorder', fg),
    blue: v(style, '--vscode-charts-blue', fg),
    green: v(style, '--vscode-charts-green', fg),
    yellow: v(style, '--vscode-charts-yellow', fg),
    orange: v(style, '--vscode-charts-orange', fg),
    red: v(style, '--vscode-charts-red', v(style, '--vscode-errorForeground', fg)),
    purple: v(style, '--vscode-charts-purple', fg),
    fontFamily: v(style, '--vscode-font-family', 'system-ui, sans-serif'),
    fontSize: parseFloat(v(style, '--vscode-font-size', '13')) || 13,
  };
}

/** Calls `onChange` with the new theme whenever VS Code switches it. Returns a disposer. */
export function watchTheme(onChange: (t: Theme) => void): () => void {
  const mo = new MutationObserver(() => onChange(readTheme()));
  mo.observe(document.body, { attributes: true, attributeFilter: ['class', 'data-vscode-theme-kind', 'style'] });
  // VS Code writes the variables into the <html> style attribute
  mo.observe(document.documentElement, { attributes: true, attributeFilter: ['style'] });
  return () => mo.disconnect();
}
