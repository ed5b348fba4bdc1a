import type { EpisodeText } from "../agent/demos";
import { tokenizeEpisode } from "../agent/demos";
import { contextBudget, segments } from "../agent/transcript";
import type { GPT } from "../model/gpt";
import { scoreSequences } from "../model/score";
import type { Tokenizer } from "../model/tokenizer";

/**
 * Where a cloned policy's loss sits: the agent-token negative log-likelihood of demonstrations,
 * grouped by what the token is. A value token of an API call is `<arg>[first]` (its first token)
 * or `<arg>[rest]`, and the token that ends it `<arg>[end]`; every other agent token (app and API
 * names, argument names, punctuation, <eoa>) is `syntax`. A value the policy has to copy from an observation (a password, an access
 * token) at about ln(36) = 3.6 nats a character means it is guessing, not copying.
 */
export interface NllRow {
  key: string;
  tokens: number;
  /** Mean NLL per token, nats. */
  mean: number;
  /** Sum over the tokens, nats. */
  total: number;
}

/** Per token of one action (its ids, <eoa> included): the category `argumentNll` reports. */
export function actionTokenCategories(tok: Tokenizer, action: readonly number[]): string[] {
  const out: string[] = [];
  let arg = "";
  let quoted = false;
  let index = -1; // position inside the current value, -1 outside one
  for (let i = 0; i < action.length; i++) {
    const text = tok.tokenText(action[i] as number);
    if (index >= 0) {
      const ends = quoted ? text.startsWith('"') : /^[,)]/.test(text);
      if (!ends) {
        out.push(`${arg}[${index === 0 ? "first" : "rest"}]`);
        index++;
        continue;
      }
      index = -1;
      // The token that ends the value (its closing quote, or what follows an unquoted value):
      // whether the policy stops a copied value at the right place.
      out.push(`${arg}[end]`);
      continue;
    }
    out.push("syntax");
    if (text === '="' || text === "=") {
      arg = i > 0 ? tok.tokenText(action[i - 1] as number) : "";
      quoted = text === '="';
      index = 0;
    }
  }
  return out;
}

/** Scores demonstrations (in the rollouts' transcript and context rule) and groups the NLL. */
export async function argumentNll(
  model: GPT,
  tok: Tokenizer,
  episodes: readonly EpisodeText[],
): Promise<NllRow[]> {
  const sums = new Map<string, { tokens: number; total: number }>();
  const add = (key: string, nll: number) => {
    const s = sums.get(key) ?? { tokens: 0, total: 0 };
    s.tokens++;
    s.total += nll;
    sums.set(key, s);
  };
  for (const ep of episodes) {
    const t = tokenizeEpisode(tok, ep);
    const categories = t.turns.map((turn) => actionTokenCategories(tok, turn.action));
    const segs = segments(t.prompt, t.turns, contextBudget(model.config.context));
    for (const seg of segs) {
      // One segment a pass: a few full-context segments at once overflow wasm's heap past 2 layers.
      const lp = (await scoreSequences(model, [seg.tokens], { entropy: false }))
        .logprobs[0] as Float32Array;
      let turn = -1;
      let within = 0;
      seg.turnOf.forEach((owner, i) => {
        if (owner < 0 || !seg.agentMask[i]) return;
        if (owner !== turn) {
          turn = owner;
          within = 0;
        }
        const key = categories[owner]?.[within++] ?? "syntax";
        const nll = -(lp[i] as number);
        add(key, nll);
        add("all", nll);
      });
    }
  }
  return [...sums.entries()]
    .map(([key, s]) => ({ key, tokens: s.tokens, mean: s.total / s.tokens, total: s.total }))
    .sort((a, b) => b.total - a.total);
}

/** The NLL of a whole value of an argument, from `argumentNll`'s rows. */
export interface ValueNll {
  arg: string;
  /** Values scored (the count of `<arg>[first]` tokens). */
  values: number;
  /** Mean NLL of a whole value, its end included: first + rest / values + end (nats). */
  nats: number;
}

/**
 * Per argument, the mean NLL of writing a whole value and stopping where it ends: the sum over a
 * value's tokens of -log p, averaged over values (exp(-nats) is their geometric-mean likelihood).
 */
export function valueNll(rows: readonly NllRow[]): ValueNll[] {
  const by = new Map(rows.map((r) => [r.key, r]));
  const out: ValueNll[] = [];
  for (const r of rows) {
    const m = /^(.*)\[first\]$/.exec(r.key);
    if (!m) continue;
    const arg = m[1] as string;
    const rest = by.get(`${arg}[rest]`)?.total ?? 0;
    const end = by.get(`${arg}[end]`)?.total ?? 0;
    out.push({ arg, values: r.tokens, nats: (r.total + rest + end) / r.tokens });
  }
  return out.sort((a, b) => b.nats * b.values - a.nats * a.values);
}
