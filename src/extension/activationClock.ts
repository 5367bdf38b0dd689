// Imported first by extension.ts, so its timestamp marks the start of the bundle's evaluation;
// extension.ts stamps the end. Activation is then module evaluation plus activate(), without the
// time VS Code spends between the two (it prepares the extension's context meanwhile).
export const activationClock = { moduleStart: performance.now(), moduleEnd: 0 };
