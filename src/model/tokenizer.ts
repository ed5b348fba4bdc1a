/**
 * A tokenizer made for this world. Words (identifiers such as show_transactions included) are whole
 * tokens when frequent; a Titlecase word is <cap> + its lower-case token, so "Rosa" in a name and
 * "rosa" in rosa.ellis@mail.com share a token and copying needs no case mapping; every digit is
 * its own token (numbers copy digit by digit); runs of punctuation use the longest known piece
 * ("\":\"", "},{"), except that a run starting with a quote (not `":`) begins with a lone quote
 * token (see TokenizerSpec.splitQuote); any other character is <u16> + two byte tokens (its UTF-16
 * code unit), so decode(encode(s)) === s for every JS string.
 */

export const SPECIAL_TOKENS = ["<pad>", "<bos>", "<eoo>", "<eoa>", "<cap>", "<u16>"] as const;
export type SpecialToken = (typeof SPECIAL_TOKENS)[number];
export const PAD = 0;
export const BOS = 1;
/** Ends the prompt and every observation: the agent acts next. */
export const EOO = 2;
/** Ends an action: the environment executes it. */
export const EOA = 3;
/** The next word is Titlecase. */
export const CAP = 4;
/** The next two tokens are the bytes of one UTF-16 code unit. */
export const U16 = 5;
const BYTE0 = SPECIAL_TOKENS.length;
/** The first id of the text tokens (after the special tokens and the 256 bytes). */
export const TEXT0 = BYTE0 + 256;
/** A byte token (the half of a <u16> code unit). */
export function isByteToken(id: number): boolean {
  return id >= BYTE0 && id < TEXT0;
}
/** Single characters that get their own token: printable ASCII, newline, tab. */
const BASE_CHARS = [
  "\n",
  "\t",
  ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)),
];

export interface TokenizerSpec {
  kind: "loop-world-tokenizer";
  version: 1;
  /** Multi-character punctuation pieces, in id order. */
  pieces: string[];
  /** Lower-case words and identifiers, in id order. */
  words: string[];
  /**
   * A punctuation run that starts with a quote begins with a lone `"` token (unless it is a JSON
   * key's `":`), so a quoted value ends with the same token in an observation (`"},{"` -> `"`
   * `},{"`) and in an action (`")` -> `"` `)`): a copy of the value runs through its closing
   * quote instead of having to guess where the value ends. Absent (false) in vocabularies made
   * before the field existed.
   */
  splitQuote?: boolean;
  /**
   * Plural words written as their singular's token and `s` (`classmates` -> `classmate` `s`): the
   * world's relationships, which an instruction names in the plural (`each of my classmates`) and
   * an action writes in the singular (`relationship="classmate"`), so a pointer can copy the
   * singular from the instruction. Each one's singular is a word of the vocabulary. Absent (none)
   * in vocabularies made before the field existed.
   */
  plurals?: string[];
}

const SPLIT = /[A-Za-z]+(?:_[A-Za-z]+)*|[0-9]|[^A-Za-z0-9]+/g;
const MAX_PIECE = 6;

/**
 * A punctuation run that starts with a quote closing a value (TokenizerSpec.splitQuote): any but
 * `":`, where the quote closes a JSON key (`"password":"`: that piece marks where a value starts,
 * what a copy of it keys on).
 */
function closesValue(run: string): boolean {
  return run.length > 1 && run[0] === '"' && run[1] !== ":";
}

function isTitle(word: string): boolean {
  return /^[A-Z][a-z]*$/.test(word) && word.length > 1;
}

export class Tokenizer {
  private readonly vocab: string[];
  private readonly ids = new Map<string, number>();
  private readonly wordIds = new Map<string, number>();
  /** TokenizerSpec.plurals: a plural -> its singular's id. */
  private readonly pluralIds = new Map<string, number>();

  readonly spec: TokenizerSpec;

  constructor(spec: TokenizerSpec) {
    // The saved form: splitQuote only when on, plurals only when some (vocabularies made before
    // they existed lack them).
    this.spec = {
      kind: spec.kind,
      version: spec.version,
      pieces: [...spec.pieces],
      words: [...spec.words],
      ...(spec.splitQuote ? { splitQuote: true } : {}),
      ...(spec.plurals?.length ? { plurals: [...spec.plurals] } : {}),
    };
    this.vocab = [
      ...SPECIAL_TOKENS,
      ...Array.from({ length: 256 }, (_, i) => `<0x${i.toString(16).padStart(2, "0")}>`),
      ...BASE_CHARS,
      ...spec.pieces,
      ...spec.words,
    ];
    const w0 = TEXT0 + BASE_CHARS.length + spec.pieces.length;
    for (const [i, c] of BASE_CHARS.entries()) this.ids.set(c, TEXT0 + i);
    for (const [i, p] of spec.pieces.entries()) this.ids.set(p, TEXT0 + BASE_CHARS.length + i);
    for (const [i, w] of spec.words.entries()) this.wordIds.set(w, w0 + i);
    for (const w of spec.plurals ?? []) {
      const singular = this.wordIds.get(w.slice(0, -1));
      if (!w.endsWith("s") || singular === undefined)
        throw new Error(`tokenizer plural ${JSON.stringify(w)} is not a vocabulary word + "s"`);
      this.pluralIds.set(w, singular);
    }
  }

  get size(): number {
    return this.vocab.length;
  }

  /** The token's text, for display (special tokens and bytes as <name>). */
  tokenText(id: number): string {
    return this.vocab[id] ?? `<unk ${id}>`;
  }

  encode(text: string): number[] {
    const out: number[] = [];
    for (const m of text.matchAll(SPLIT)) this.encodePiece(m[0], out);
    return out;
  }

  private encodePiece(piece: string, out: number[]): void {
    const c = piece.charCodeAt(0);
    const isLetter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    if (isLetter) this.encodeWord(piece, out);
    else if (c >= 48 && c <= 57) out.push(this.ids.get(piece) as number);
    else this.encodePunct(piece, out);
  }

  private encodeWord(word: string, out: number[]): void {
    const singular = this.pluralIds.get(isTitle(word) ? word.toLowerCase() : word);
    if (singular !== undefined) {
      if (word !== word.toLowerCase()) out.push(CAP);
      out.push(singular, this.ids.get("s") as number);
      return;
    }
    const id = this.wordIds.get(word);
    if (id !== undefined) {
      out.push(id);
      return;
    }
    if (isTitle(word)) {
      const lower = this.wordIds.get(word.toLowerCase());
      if (lower !== undefined) {
        out.push(CAP, lower);
        return;
      }
    }
    if (word.includes("_")) {
      word.split("_").forEach((part, i) => {
        if (i > 0) out.push(this.ids.get("_") as number);
        if (part) this.encodeWord(part, out);
      });
      return;
    }
    for (const ch of word) out.push(this.ids.get(ch) as number);
  }

  private encodePunct(run: string, out: number[]): void {
    let i = 0;
    if (this.spec.splitQuote && closesValue(run)) {
      out.push(this.ids.get('"') as number);
      i = 1;
    }
    while (i < run.length) {
      let taken = 0;
      for (let len = Math.min(MAX_PIECE, run.length - i); len >= 1; len--) {
        const id = this.ids.get(run.slice(i, i + len));
        if (id !== undefined) {
          out.push(id);
          taken = len;
          break;
        }
      }
      if (taken === 0) {
        const code = run.charCodeAt(i);
        out.push(U16, BYTE0 + (code >> 8), BYTE0 + (code & 255));
        taken = 1;
      }
      i += taken;
    }
  }

  decode(ids: readonly number[]): string {
    let out = "";
    let cap = false;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as number;
      if (id === CAP) {
        cap = true;
        continue;
      }
      let text: string;
      if (id === U16 && i + 2 < ids.length) {
        const hi = (ids[i + 1] as number) - BYTE0;
        const lo = (ids[i + 2] as number) - BYTE0;
        text = String.fromCharCode(((hi & 255) << 8) | (lo & 255));
        i += 2;
      } else if (id < TEXT0) text = "";
      else text = this.vocab[id] ?? "";
      if (cap && text) text = text[0]?.toUpperCase() + text.slice(1);
      cap = false;
      out += text;
    }
    return out;
  }

  /** The vocabulary as saved in a checkpoint (a copy). */
  toJSON(): TokenizerSpec {
    const { plurals } = this.spec;
    return {
      ...this.spec,
      pieces: [...this.spec.pieces],
      words: [...this.spec.words],
      ...(plurals ? { plurals: [...plurals] } : {}),
    };
  }

  /**
   * ModelConfig.copyEmit for this vocabulary: every piece that closes a single-quoted value
   * (a `'` and the punctuation or space after it: `' `, `'.`, `',`; a piece is never a letter
   * or digit) writes the `"` that closes an action's string. An instruction quotes its values with `'` (`Add 'Otto' as a new line ...`),
   * an action with `"`; no action writes such a piece (an apostrophe inside a word is a lone `'`).
   */
  quoteEmit(): [number, number][] {
    const quote = this.ids.get('"') as number;
    return this.spec.pieces
      .filter((p) => p[0] === "'" && p[1] !== "'")
      .map((p) => [this.ids.get(p) as number, quote]);
  }

  /** The same vocabulary with TokenizerSpec.splitQuote on (to continue an older checkpoint). */
  withSplitQuote(): Tokenizer {
    return new Tokenizer({ ...this.spec, splitQuote: true });
  }

  /**
   * The same vocabulary with these TokenizerSpec.plurals (to continue an older checkpoint): the
   * words of `plurals` whose singular is a word of it.
   */
  withPlurals(plurals: readonly string[]): Tokenizer {
    return new Tokenizer({ ...this.spec, plurals: this.knownPlurals(plurals) });
  }

  private knownPlurals(plurals: readonly string[]): string[] {
    return [...new Set(plurals)].filter(
      (w) => /^[a-z]+s$/.test(w) && this.wordIds.has(w.slice(0, -1)),
    );
  }

  /** Checks a saved spec (from a checkpoint) and builds the tokenizer; throws a clear error. */
  static fromJSON(value: unknown): Tokenizer {
    const v = value as Partial<TokenizerSpec> | null;
    if (v?.kind !== "loop-world-tokenizer" || v.version !== 1)
      throw new Error("not a loop-world-tokenizer v1 vocabulary");
    const strings = (xs: unknown) =>
      Array.isArray(xs) && xs.every((x) => typeof x === "string" && x.length > 0);
    if (!strings(v.pieces) || !strings(v.words))
      throw new Error("tokenizer pieces and words must be non-empty strings");
    const pieces = v.pieces as string[];
    const words = v.words as string[];
    if (pieces.some((p) => /[A-Za-z0-9]/.test(p) || p.length < 2 || p.length > MAX_PIECE))
      throw new Error("a tokenizer piece is not a punctuation run of 2-6 characters");
    if (words.some((w) => !/^[a-z]+(?:_[a-z]+)*$/.test(w)))
      throw new Error("a tokenizer word is not lower-case letters");
    if (new Set([...pieces, ...words]).size !== pieces.length + words.length)
      throw new Error("the tokenizer vocabulary has duplicates");
    if (v.splitQuote !== undefined && typeof v.splitQuote !== "boolean")
      throw new Error("tokenizer splitQuote must be true or false");
    if (
      v.plurals !== undefined &&
      !(
        Array.isArray(v.plurals) &&
        v.plurals.every((w) => typeof w === "string" && /^[a-z]+s$/.test(w))
      )
    )
      throw new Error("tokenizer plurals must be lower-case words ending in s");
    return new Tokenizer({
      kind: "loop-world-tokenizer",
      version: 1,
      pieces,
      words,
      splitQuote: v.splitQuote,
      ...(v.plurals ? { plurals: v.plurals } : {}),
    });
  }

  /** Builds a vocabulary from a corpus: the most frequent words and punctuation runs. */
  static build(
    corpus: readonly string[],
    options: {
      maxWords?: number;
      maxPieces?: number;
      minCount?: number;
      splitQuote?: boolean;
      /** TokenizerSpec.plurals: those of these words whose singular makes the vocabulary. */
      plurals?: readonly string[];
    } = {},
  ): Tokenizer {
    const { maxWords = 1500, maxPieces = 120, minCount = 2, splitQuote = true } = options;
    const words = new Map<string, number>();
    const pieces = new Map<string, number>();
    const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
    for (const text of corpus)
      for (let [piece] of text.matchAll(SPLIT)) {
        const c = piece.charCodeAt(0);
        if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) {
          const w = isTitle(piece) ? piece.toLowerCase() : piece;
          if (/^[a-z]+(?:_[a-z]+)*$/.test(w)) bump(words, w);
        } else if (!(c >= 48 && c <= 57) && piece.length >= 2 && !/[^\x20-\x7e\n]/.test(piece)) {
          if (splitQuote && closesValue(piece)) piece = piece.slice(1);
          for (let len = 2; len <= Math.min(MAX_PIECE, piece.length); len++)
            for (let i = 0; i + len <= piece.length; i++) bump(pieces, piece.slice(i, i + len));
        }
      }
    const top = (m: Map<string, number>, n: number, ok: (k: string) => boolean) =>
      [...m.entries()]
        .filter(([k, count]) => count >= minCount && ok(k))
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, n)
        .map(([k]) => k);
    const built = new Tokenizer({
      kind: "loop-world-tokenizer",
      version: 1,
      pieces: top(pieces, maxPieces, (k) => k.length >= 2),
      words: top(words, maxWords, (w) => w.length >= 2),
      splitQuote,
    });
    return options.plurals ? built.withPlurals(options.plurals) : built;
  }
}
