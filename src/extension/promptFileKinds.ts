// Which files are prompt files, and under which name the engine's parser should read them. Pure.

/** The built-in prompt file kinds (the engine's parsePromptFile tells them apart by name). */
export const PROMPT_FILE_GLOBS = ['**/*.prompt.md', '**/*.prompty', '**/*.prompt.yml', '**/*.prompt.yaml'] as const;

export function isBuiltInPromptFile(fileName: string): boolean {
  return /\.(prompt\.md|prompty|prompt\.ya?ml)$/i.test(fileName);
}

/**
 * The name to hand the parser: a file matched only by an extra glob is read like `*.prompt.yml`
 * when it is YAML, like `*.prompt.md` when it is markdown, and as one plain-text prompt otherwise.
 */
export function parserFileName(fileName: string): string {
  if (isBuiltInPromptFile(fileName)) return fileName;
  if (/\.ya?ml$/i.test(fileName)) return `${fileName}.prompt.yml`;
  if (/\.md$/i.test(fileName)) return `${fileName}.prompt.md`;
  return fileName;
}
