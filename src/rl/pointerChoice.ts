import * as tf from "@tensorflow/tfjs";
import type { EpisodeText } from "../agent/demos";
import { tokenizeEpisode } from "../agent/demos";
import { contextBudget, segments } from "../agent/transcript";
import type { GPT } from "../model/gpt";
import type { Tokenizer } from "../model/tokenizer";
import { actionTokenCategories } from "./argumentNll";

/**
 * Where the next-token mass goes at the first token of a copied value, for a model with a copy
 * head (ModelConfig.copyHead). p(y) = [exp(l_y) + sum_{j: x_{j+1} = y} exp(s_j)] / Z splits into
 * the vocabulary head's share and one share per pointer j; a pointer at the start of a value of
 * the same field (the key `":"` after `"password` in an observation, or `password="` in an
 * earlier action) is a *record*: the right one copies the target, the others are the same field
 * of other records (another account's password). Mass on other records means the pointer found
 * the field but not the record.
 */
export interface PointerMass {
  /** Pointers to a record of the field that copy the target. */
  right: number;
  /** Pointers to the field's other records (they copy another value). */
  otherRecords: number;
  /** Every other pointer (the target copied from elsewhere counts here too). */
  elsewhere: number;
  /** The vocabulary head's whole share. */
  vocabulary: number;
}

/** Whether token j opens a value of field `arg`: `arg` then `":"` (JSON) or `="` (an action). */
export function opensField(texts: readonly string[], j: number, arg: string): boolean {
  if (j < 1 || texts[j - 1] !== arg) return false;
  const t = texts[j] as string;
  return t === '":"' || t === '="';
}

/**
 * The split of one position's mixture (see PointerMass): `vocab` its vocabulary logits,
 * `scores[j]` the copy score of key j (keys 0..query-1; a pointer to j copies ids[j + 1]),
 * `texts` every token's text. Pure, on plain arrays.
 */
export function pointerMass(
  ids: readonly number[],
  texts: readonly string[],
  query: number,
  vocab: ArrayLike<number>,
  scores: ArrayLike<number>,
  arg: string,
): PointerMass {
  const target = ids[query + 1];
  let max = -Infinity;
  for (let v = 0; v < vocab.length; v++) max = Math.max(max, vocab[v] as number);
  for (let j = 0; j < query; j++) max = Math.max(max, scores[j] as number);
  let vocabulary = 0;
  for (let v = 0; v < vocab.length; v++) vocabulary += Math.exp((vocab[v] as number) - max);
  const out = { right: 0, otherRecords: 0, elsewhere: 0, vocabulary };
  for (let j = 0; j < query; j++) {
    const p = Math.exp((scores[j] as number) - max);
    if (!opensField(texts, j, arg)) out.elsewhere += p;
    else if (ids[j + 1] === target) out.right += p;
    else out.otherRecords += p;
  }
  const z = out.right + out.otherRecords + out.elsewhere + out.vocabulary;
  return {
    right: out.right / z,
    otherRecords: out.otherRecords / z,
    elsewhere: out.elsewhere / z,
    vocabulary: out.vocabulary / z,
  };
}

/** Per argument: the mean PointerMass at its values' first tokens, over `values` values. */
export interface PointerRow extends PointerMass {
  arg: string;
  values: number;
}

/**
 * Scores demonstrations (the rollouts' transcript and context rule) and averages, per argument,
 * where the mass goes at the first token of each value (see PointerMass).
 */
export async function pointerChoice(
  model: GPT,
  tok: Tokenizer,
  episodes: readonly EpisodeText[],
): Promise<PointerRow[]> {
  if (!model.config.copyHead) throw new Error("pointerChoice: the model has no copy head");
  const sums = new Map<string, PointerRow>();
  for (const ep of episodes) {
    const t = tokenizeEpisode(tok, ep);
    const categories = t.turns.map((turn) => actionTokenCategories(tok, turn.action));
    for (const seg of segments(t.prompt, t.turns, contextBudget(model.config.context))) {
      const ids = seg.tokens;
      const texts = ids.map((id) => tok.tokenText(id));
      // The positions whose next token is a value's first token, and its argument.
      const queries: [number, string][] = [];
      let turn = -1;
      let within = 0;
      seg.turnOf.forEach((owner, i) => {
        if (owner < 0 || !seg.agentMask[i]) return;
        if (owner !== turn) {
          turn = owner;
          within = 0;
        }
        const m = /^(.*)\[first\]$/.exec(categories[owner]?.[within++] ?? "");
        if (m && i > 0) queries.push([i - 1, m[1] as string]);
      });
      if (!queries.length) continue;
      const T = ids.length;
      const [vocab, scores] = tf.tidy(() => {
        const out = model.forward(tf.tensor2d([ids], [1, T], "int32"), { mixture: false });
        const pick = tf.tensor1d(
          queries.map(([q]) => q),
          "int32",
        );
        const copy = out.copy as NonNullable<typeof out.copy>;
        return [
          tf.gather(out.logits.reshape([T, -1]), pick),
          tf.gather(copy.scores.reshape([T, -1]), pick),
        ];
      });
      const v = (await vocab.array()) as number[][];
      const s = (await scores.array()) as number[][];
      tf.dispose([vocab, scores]);
      queries.forEach(([q, arg], k) => {
        const m = pointerMass(ids, texts, q, v[k] as number[], s[k] as number[], arg);
        const row = sums.get(arg) ?? {
          arg,
          values: 0,
          right: 0,
          otherRecords: 0,
          elsewhere: 0,
          vocabulary: 0,
        };
        row.values++;
        row.right += m.right;
        row.otherRecords += m.otherRecords;
        row.elsewhere += m.elsewhere;
        row.vocabulary += m.vocabulary;
        sums.set(arg, row);
      });
    }
  }
  return [...sums.values()]
    .map((r) => ({
      ...r,
      right: r.right / r.values,
      otherRecords: r.otherRecords / r.values,
      elsewhere: r.elsewhere / r.values,
      vocabulary: r.vocabulary / r.values,
    }))
    .sort((a, b) => b.values - a.values);
}
