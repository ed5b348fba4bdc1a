import { createEpisode, type Episode, type Evaluation } from "../env";
import { Rng } from "../env/rng";
import { generate } from "../model/decode";
import type { GPT } from "../model/gpt";
import { EOA, type Tokenizer } from "../model/tokenizer";
import {
  contextBudget,
  contextFor,
  contextStarts,
  MAX_ACTION_TOKENS,
  observationTokens,
  promptTokens,
  type TurnTokens,
} from "./transcript";

export interface RolloutOptions {
  /** Sampling temperature (1 for training; 0 = greedy). */
  temperature: number;
  /** Seed of the token sampler. */
  seed: number;
  /** "train" (40 turns) or "eval" (50 turns). */
  mode: "train" | "eval";
  /** Episodes decoded together in one batch. */
  batchSize?: number;
  maxActionTokens?: number;
  /** Overrides the mode's turn budget (tests use short episodes). */
  maxTurns?: number;
}

/** One rollout, with everything the trainer needs: the exact sampled ids and their log-probs. */
export interface Trajectory {
  taskId: string;
  /** The first observation as text (instruction included). */
  promptText: string;
  prompt: number[];
  turns: TurnTokens[];
  /** Sampling log-prob of every action token, per turn. */
  logprobs: number[][];
  /** Context start of each turn (the context rule). */
  starts: number[];
  actions: string[];
  observations: string[];
  evaluation: Evaluation;
}

/** Attention scores held at once during a prefill (floats): keeps wasm's 4 GB heap safe. */
const ATTENTION_BUDGET = 2 ** 25;

/**
 * Splits rows into decoding batches of at most `maxRows`, and fewer when contexts are long, so that
 * rows x heads x length^2 attention scores stay within ATTENTION_BUDGET.
 */
export function chunks(contexts: readonly number[][], maxRows: number, heads: number): number[][] {
  const out: number[][] = [];
  let current: number[] = [];
  let longest = 0;
  contexts.forEach((c, i) => {
    const L = Math.max(longest, c.length);
    if (
      current.length > 0 &&
      (current.length >= maxRows || (current.length + 1) * heads * L * L > ATTENTION_BUDGET)
    ) {
      out.push(current);
      current = [];
    }
    current.push(i);
    longest = current.length === 1 ? c.length : L;
  });
  if (current.length > 0) out.push(current);
  return out;
}

interface Live {
  episode: Episode;
  traj: Omit<Trajectory, "evaluation">;
}

/**
 * Plays the model in many episodes at once: each round, every live episode's context (by the
 * context rule) is decoded in batches with the KV cache; the decoded actions step the episodes.
 */
export async function rollout(
  model: GPT,
  tok: Tokenizer,
  taskIds: readonly string[],
  opts: RolloutOptions,
): Promise<Trajectory[]> {
  const rng = new Rng(opts.seed);
  const maxTokens = opts.maxActionTokens ?? MAX_ACTION_TOKENS;
  const budget = contextBudget(model.config.context);
  const batchSize = opts.batchSize ?? 16;
  const live: Live[] = taskIds.map((id) => {
    const episode = createEpisode(id, {
      mode: opts.mode,
      ...(opts.maxTurns ? { maxTurns: opts.maxTurns } : {}),
    });
    return {
      episode,
      traj: {
        taskId: id,
        promptText: episode.prompt,
        prompt: promptTokens(tok, episode.prompt),
        turns: [],
        logprobs: [],
        starts: [],
        actions: [],
        observations: [],
      },
    };
  });
  while (live.some((l) => !l.episode.done)) {
    const active = live.filter((l) => !l.episode.done);
    const contexts = active.map(({ traj }) => {
      const lengths = [...traj.turns.map((t) => t.action.length + t.observation.length), 0];
      const start = contextStarts(traj.prompt.length, lengths, budget).at(-1) as number;
      traj.starts.push(start);
      return contextFor(traj.prompt, traj.turns, start, traj.turns.length);
    });
    for (const rows of chunks(contexts, batchSize, model.config.nHeads)) {
      const gen = await generate(
        model,
        rows.map((i) => contexts[i] as number[]),
        { temperature: opts.temperature, maxTokens, rng },
      );
      rows.forEach((i, b) => {
        const { episode, traj } = active[i] as Live;
        const action = gen.tokens[b] as number[];
        const text = tok.decode(action.filter((t) => t !== EOA));
        const { observation } = episode.step(text);
        traj.turns.push({ action, observation: observationTokens(tok, observation) });
        traj.logprobs.push(gen.logprobs[b] as number[]);
        traj.actions.push(text);
        traj.observations.push(observation);
      });
    }
  }
  return live.map(({ episode, traj }) => ({ ...traj, evaluation: episode.evaluate() }));
}
