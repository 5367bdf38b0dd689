// The synthetic model presets, in one place: the CLI's flags, the settings, the sidebar and the
// local server all take their names from here. Pure (no node imports): the webview imports it.

export const SYNTHETIC_PRESETS = ['tiny', 'small', 'medium'] as const;

export type SyntheticPreset = (typeof SYNTHETIC_PRESETS)[number];

export function isSyntheticPreset(name: string): name is SyntheticPreset {
  return (SYNTHETIC_PRESETS as readonly string[]).includes(name);
}
