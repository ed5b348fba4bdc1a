/** The transformer's shape. */
export interface ModelConfig {
  vocabSize: number;
  /** Longest token sequence the model reads (learned absolute positions). */
  context: number;
  dModel: number;
  nLayers: number;
  nHeads: number;
  dMlp: number;
  /**
   * 1: each token's input also gets an embedding of the token before it (a learned [vocab, d]
   * table), so attention can match "the token after an earlier occurrence of this one" from the
   * first layer: copying names, emails and passwords from observations (an induction head) no
   * longer has to be learned from scratch. 0 (older checkpoints): token + position only.
   * 2: also the token two back (`wprev2`), so a key can match on the two tokens before it: a bigram
   * is nearly unique in a context, where one character of a password or access token is not.
   * 3, 4: also the tokens three and four back (`wprev3`, `wprev4`): in a list of records such as
   * `{"account_name":"pay","password":"`, the key at a value's start then sees which record it is
   * in (`pay` is three back), so a pointer can pick the right record's value.
   */
  prevToken: PrevToken;
  /**
   * A copy (pointer) head: the next-token distribution is one softmax over the vocabulary's logits
   * and a score for every earlier position j, whose mass goes to the token that followed j,
   * p(y) = [exp(l_y) + sum_{j: x_{j+1} = y} exp(s_j)] / Z (a pointer-generator in the joint-softmax
   * form). Copying a password or an access token from an observation is then one learned match of
   * the current state against earlier states, not an induction circuit to grow inside the layers.
   * false (older checkpoints): the vocabulary head only.
   */
  copyHead: boolean;
  /**
   * With the copy head: a continuation prior for the pointer. Position t's score for key j gains
   * c * a_{t-1}(j-1), where a_{t-1} is the previous position's copy attention (the softmax of its
   * scores over its earlier positions): once the pointer has found a value's first character it
   * is drawn along the value, instead of jumping to another occurrence of the character it just
   * wrote. c is learned (`copy.cont`, starting at 0). false (older checkpoints): no prior.
   */
  copyContinue: boolean;
  /**
   * With the copy head: each key's score also sees the token a pointer to it would copy,
   * s_tj += 30 [(h_t W_c) . E_c[x_{j+1}] + b[x_{j+1}]] (`copy.wc` [d, r], `copy.tok` [vocab, r] and
   * `copy.bias` [vocab, 1], the last two starting at 0; r = COPY_TARGET_DIM).
   * A key's own state cannot know the token after it (causal), so without this the pointer cannot
   * tell where a copied value ends: in `Add a todo 'Coffee filters' due ...` it runs on into the
   * closing `' ` where the action's value must close with `"`. With it, the query can learn which
   * tokens it may copy where. false (older checkpoints): no such term.
   */
  copyTarget: boolean;
  /**
   * With the copy head: pairs [from, to] of token ids; a pointer to a key whose next token is
   * `from` writes `to` (every other pointer writes the token it points at). The agent's actions
   * quote every string with `"`, while an instruction quotes its values with `'`: with
   * [closing-single-quote piece, `"`] (`quoteEmit` in tokenizer.ts) a pointer drawn along
   * `'Otto' as` closes the value with the `"` the action needs instead of running on into the
   * `' ` no action ever writes. Absent or empty (older checkpoints): every pointer writes its token.
   */
  copyEmit?: readonly (readonly [number, number])[];
}

/** The width of the copy head's copied-token embedding (ModelConfig.copyTarget). */
export const COPY_TARGET_DIM = 16;

/** How many tokens back each token's input sees (ModelConfig.prevToken). */
export type PrevToken = 0 | 1 | 2 | 3 | 4;
export const MAX_PREV_TOKEN = 4;

export type PresetName = "tiny" | "small" | "default";

/** Named sizes; vocabSize comes from the tokenizer. */
export const PRESETS: Record<PresetName, Omit<ModelConfig, "vocabSize">> = {
  /** For tests: a train step in well under a second on the Node cpu backend. */
  tiny: {
    context: 1024,
    dModel: 32,
    nLayers: 2,
    nHeads: 2,
    dMlp: 64,
    prevToken: 1,
    copyHead: false,
    copyContinue: false,
    copyTarget: false,
  },
  /** Quick experiments on a CPU. */
  small: {
    context: 2048,
    dModel: 64,
    nLayers: 2,
    nHeads: 2,
    dMlp: 256,
    prevToken: 1,
    copyHead: false,
    copyContinue: false,
    copyTarget: false,
  },
  /** The page's model: at most 2M parameters. */
  default: {
    context: 2048,
    dModel: 128,
    nLayers: 4,
    nHeads: 4,
    dMlp: 512,
    prevToken: 1,
    copyHead: false,
    copyContinue: false,
    copyTarget: false,
  },
};

export function presetConfig(name: PresetName, vocabSize: number): ModelConfig {
  const preset = PRESETS[name];
  if (!preset)
    throw new Error(`Unknown model preset '${name}'. Presets: ${Object.keys(PRESETS).join(", ")}.`);
  return { ...preset, vocabSize };
}

/** The size fields of a config (positive integers), in a fixed order. */
const SIZE_KEYS = ["vocabSize", "context", "dModel", "nLayers", "nHeads", "dMlp"] as const;

/** Every field of a config, in a fixed order. */
export const CONFIG_KEYS: readonly (keyof ModelConfig)[] = [
  ...SIZE_KEYS,
  "prevToken",
  "copyHead",
  "copyContinue",
  "copyTarget",
];

/** Checks a config (from a checkpoint or a caller); throws a message naming what is wrong. */
export function validateConfig(c: unknown): ModelConfig {
  const v = c as Partial<ModelConfig> | null;
  for (const k of SIZE_KEYS) {
    const x = v?.[k];
    if (typeof x !== "number" || !Number.isInteger(x) || x <= 0)
      throw new Error(`model config: ${k} must be a positive integer, got ${JSON.stringify(x)}`);
  }
  const prev = v?.prevToken ?? 0; // absent in checkpoints made before the field existed
  if (typeof prev !== "number" || !Number.isInteger(prev) || prev < 0 || prev > MAX_PREV_TOKEN)
    throw new Error(
      `model config: prevToken must be an integer from 0 to ${MAX_PREV_TOKEN}, got ${JSON.stringify(prev)}`,
    );
  const copyHead = v?.copyHead ?? false; // absent in checkpoints made before the field existed
  if (typeof copyHead !== "boolean")
    throw new Error(
      `model config: copyHead must be true or false, got ${JSON.stringify(copyHead)}`,
    );
  const copyContinue = v?.copyContinue ?? false; // absent in checkpoints made before the field existed
  if (typeof copyContinue !== "boolean")
    throw new Error(
      `model config: copyContinue must be true or false, got ${JSON.stringify(copyContinue)}`,
    );
  if (copyContinue && !copyHead) throw new Error("model config: copyContinue needs copyHead");
  const copyTarget = v?.copyTarget ?? false; // absent in checkpoints made before the field existed
  if (typeof copyTarget !== "boolean")
    throw new Error(
      `model config: copyTarget must be true or false, got ${JSON.stringify(copyTarget)}`,
    );
  if (copyTarget && !copyHead) throw new Error("model config: copyTarget needs copyHead");
  const copyEmit = validateCopyEmit(v?.copyEmit, v?.vocabSize as number);
  if (copyEmit.length && !copyHead) throw new Error("model config: copyEmit needs copyHead");
  const cfg = v as ModelConfig;
  if (cfg.dModel % cfg.nHeads !== 0)
    throw new Error("model config: dModel must be a multiple of nHeads");
  return {
    vocabSize: cfg.vocabSize,
    context: cfg.context,
    dModel: cfg.dModel,
    nLayers: cfg.nLayers,
    nHeads: cfg.nHeads,
    dMlp: cfg.dMlp,
    prevToken: prev as PrevToken,
    copyHead,
    copyContinue,
    copyTarget,
    ...(copyEmit.length ? { copyEmit } : {}),
  };
}

/** ModelConfig.copyEmit checked: pairs of token ids below the vocabulary size, each `from` once. */
function validateCopyEmit(x: unknown, vocabSize: number): [number, number][] {
  if (x === undefined) return [];
  const id = (t: unknown) =>
    typeof t === "number" && Number.isInteger(t) && t >= 0 && t < vocabSize;
  if (!Array.isArray(x) || !x.every((p) => Array.isArray(p) && p.length === 2 && p.every(id)))
    throw new Error(
      `model config: copyEmit must be pairs [from, to] of token ids below ${vocabSize}, got ${JSON.stringify(x)}`,
    );
  const pairs = x.map((p) => [p[0], p[1]] as [number, number]);
  if (new Set(pairs.map((p) => p[0])).size !== pairs.length)
    throw new Error(`model config: copyEmit maps a token twice: ${JSON.stringify(x)}`);
  return pairs;
}
