// Prompt texts as words (the cost-model server counts a token per whitespace-separated word).

export const words = (text: string): string[] => text.split(/\s+/).filter(Boolean);

/** Whole words shared at the start of both texts. */
export function sharedWords(a: string, b: string): number {
  const x = words(a);
  const y = words(b);
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return i;
}
