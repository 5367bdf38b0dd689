// How many tokens a synthetic model makes of a chat prompt, without loading it (the job builders
// size the local server's slots with it before anything starts). The synthetic vocabulary
// (synthetic.ts buildVocabulary) holds "▁", the printable ASCII characters and "▁word" pieces whose
// every prefix is a piece too, so llama.cpp's SentencePiece merge over it can only grow a piece that
// starts at a space, one character at a time, while the longer piece exists: a space starts the
// longest piece it can, any other printable ASCII character is one token, and everything else is
// its UTF-8 bytes (byte fallback). Around the ChatML markers it counts as llama.cpp tokenizes the
// engine's template (inference.ts chatTokens): BOS, each marker one token, and a space before the
// text that follows a marker.
import { buildVocabulary } from './synthetic';

const SPACE = 0x20;
const SPM_SPACE = 0x2581; // "▁": what llama.cpp turns a space into

type Counter = (text: string) => number;

/** A counter of raw text (as one fragment after a special token: with llama.cpp's space prefix). */
function rawCounter(pieces: ReadonlySet<string>): Counter {
  return (text) => {
    const s = ` ${text}`;
    let n = 0;
    let i = 0;
    while (i < s.length) {
      const c = s.codePointAt(i)!;
      const width = c > 0xffff ? 2 : 1;
      if (c === SPACE || c === SPM_SPACE) {
        let piece = '▁';
        let j = i + width;
        while (j < s.length) {
          const next = s.codePointAt(j)!;
          const w = next > 0xffff ? 2 : 1;
          const longer = piece + (next === SPACE ? '▁' : s.slice(j, j + w));
          if (!pieces.has(longer)) break;
          piece = longer;
          j += w;
        }
        n++;
        i = j;
        continue;
      }
      // printable ASCII is a piece; a control character (a newline, a tab) is one byte token
      n += c < 0x80 ? 1 : c < 0x800 ? 2 : c <= 0xffff ? 3 : 4;
      i += width;
    }
    return n;
  };
}

const bySize = new Map<number, Counter>();

export type ChatCounter = (messages: readonly { readonly role: string; readonly content: string }[]) => number;

/**
 * Counts chat prompts as the bundled server tokenizes them for a synthetic model: of this vocabulary
 * size (a preset or shape, whose vocabulary buildVocabulary makes again), or of this token list (a
 * synthetic model file's own). A marker written out in a message ("<|im_end|>") counts as its
 * characters where llama.cpp makes it one token: an overcount, on the safe side.
 */
export function syntheticChatCounter(vocab: number | readonly string[]): ChatCounter {
  let raw: Counter;
  if (typeof vocab === 'number') {
    raw = bySize.get(vocab) ?? rawCounter(new Set(buildVocabulary(vocab).tokens));
    bySize.set(vocab, raw);
  } else {
    raw = rawCounter(new Set(vocab));
  }
  const tail = 1 + raw('assistant\n');
  const newline = raw('\n');
  // BOS; per message <|im_start|>, "role\ncontent", <|im_end|>, "\n"; then <|im_start|>, "assistant\n"
  return (messages) => {
    let n = 1;
    for (const m of messages) n += 2 + raw(`${m.role}\n${m.content}`) + newline;
    return n + tail;
  };
}
