import { createEpisode, type Episode, type Evaluation } from "../env";
import { Rng } from "../env/rng";
import { disposeCache, extendAndGenerate, type RowCache } from "../model/decode";
import type { GPT } from "../model/gpt";
import type { TimeSplit } from "../model/timeSplit";
import { EOA, type Tokenizer } from "../model/tokenizer";
import type { ActionGrammar } from "./grammar";
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
  /** Episodes decoded together in one batch (default, or 0: every live episode, one wave). */
  batchSize?: number;
  maxActionTokens?: number;
  /** Overrides the mode's turn budget (tests use short episodes). */
  maxTurns?: number;
  /** Episodes live (holding a KV cache) at once; the rest wait for the next wave. */
  concurrency?: number;
  /** Adds the seconds spent decoding and in the world here. */
  timings?: TimeSplit;
  /** Constrain every action to the action grammar (see ActionGrammar); default: free text. */
  grammar?: ActionGrammar;
  /**
   * Called after every batch of decoding (each episode of the batch took one turn): live progress.
   * It is awaited, so a host can give its event loop a turn here (a worker then delivers its
   * messages: progress to the page, a pause or a reset from it) before the next batch.
   */
  onRound?: (progress: RolloutProgress) => void | Promise<void>;
  /**
   * Checked after every batch: when it says true the rollouts end there, each unfinished episode
   * evaluated as it stands (a host that resets mid-rollout does not wait for them).
   */
  stop?: () => boolean;
}

/** Where the rollouts stand after a batch of decoding. */
export interface RolloutProgress {
  /** Episodes finished so far, of `total`. */
  finished: number;
  total: number;
  /** Action tokens sampled so far, over every episode. */
  tokens: number;
  /** The episodes that took a turn in this batch: index into the task ids, turn (1-based), action. */
  stepped: SteppedEpisode[];
}

export interface SteppedEpisode {
  index: number;
  taskId: string;
  turn: number;
  action: string;
  done: boolean;
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

/** A new episode of this task, before its first turn. */
function startEpisode(id: string, index: number, tok: Tokenizer, opts: RolloutOptions): Live {
  const episode = createEpisode(id, {
    mode: opts.mode,
    ...(opts.maxTurns ? { maxTurns: opts.maxTurns } : {}),
  });
  return {
    index,
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
    cache: null,
    cacheStart: 0,
    cachedTurns: 0,
  };
}

interface Live {
  /** Index in the wave. */
  index: number;
  episode: Episode;
  traj: Omit<Trajectory, "evaluation">;
  /** KV cache of the prompt + turns [cacheStart, cachedTurns) (null = none yet). */
  cache: RowCache | null;
  cacheStart: number;
  cachedTurns: number;
}

/**
 * Plays the model in many episodes at once: each round, every live episode's context (by the
 * context rule) is decoded in batches with the KV cache; the decoded actions step the episodes.
 * Each episode keeps its cache across turns, so only the newest action and observation go
 * through the model; when the context rule drops old turns, the cache is rebuilt from the prompt.
 * At most `concurrency` episodes are live (and hold a cache) at once.
 */
export async function rollout(
  model: GPT,
  tok: Tokenizer,
  taskIds: readonly string[],
  opts: RolloutOptions,
): Promise<Trajectory[]> {
  // Derived, not `new Rng(seed)`: xoroshiro128+ seeded with a small integer draws ~0.9999999 first,
  // which sampled the first row's first token from the far tail of its distribution.
  const rng = Rng.derive(opts.seed, "sampling");
  const concurrency = opts.concurrency ?? 256;
  const out: Trajectory[] = [];
  const counts = { finished: 0, tokens: 0 };
  const onRound = opts.onRound;
  for (let i = 0; i < taskIds.length; i += concurrency) {
    if (i > 0 && opts.stop?.()) {
      // Stopped between waves: the episodes not started yet end before their first turn.
      for (const id of taskIds.slice(i)) {
        const { episode, traj } = startEpisode(id, 0, tok, opts);
        out.push({ ...traj, evaluation: episode.evaluate() });
      }
      continue;
    }
    const wave = taskIds.slice(i, i + concurrency);
    // A wave's episodes are numbered from 0: their index in taskIds is i more.
    const report = onRound
      ? (stepped: SteppedEpisode[]) =>
          onRound({
            ...counts,
            total: taskIds.length,
            stepped: stepped.map((e) => ({ ...e, index: e.index + i })),
          })
      : undefined;
    out.push(...(await rolloutWave(model, tok, wave, opts, rng, counts, report)));
  }
  return out;
}

async function rolloutWave(
  model: GPT,
  tok: Tokenizer,
  taskIds: readonly string[],
  opts: RolloutOptions,
  rng: Rng,
  counts: { finished: number; tokens: number },
  report?: (stepped: SteppedEpisode[]) => void | Promise<void>,
): Promise<Trajectory[]> {
  const maxTokens = opts.maxActionTokens ?? MAX_ACTION_TOKENS;
  const budget = contextBudget(model.config.context);
  const maxRows = opts.batchSize && opts.batchSize > 0 ? opts.batchSize : taskIds.length;
  const live = taskIds.map((id, index) => startEpisode(id, index, tok, opts));
  try {
    rounds: while (live.some((l) => !l.episode.done)) {
      const active = live.filter((l) => !l.episode.done);
      const rows = active.map((l) => {
        const { traj } = l;
        const i = traj.turns.length;
        const lengths = [...traj.turns.map((t) => t.action.length + t.observation.length), 0];
        const start = contextStarts(traj.prompt.length, lengths, budget).at(-1) as number;
        traj.starts.push(start);
        if (l.cache && l.cacheStart === start)
          return { cache: l.cache, tokens: contextFor([], traj.turns, l.cachedTurns, i) };
        disposeCache(l.cache);
        l.cache = null;
        l.cacheStart = start;
        return { cache: null, tokens: contextFor(traj.prompt, traj.turns, start, i) };
      });
      // Every live episode in one decoding batch (the wave; its prefill is chunked to fit memory),
      // or in batches of `batchSize`.
      const batches = Array.from({ length: Math.ceil(rows.length / maxRows) }, (_, k) =>
        rows.slice(k * maxRows, (k + 1) * maxRows).map((_, i) => k * maxRows + i),
      );
      for (const chunk of batches) {
        const stepped: SteppedEpisode[] = [];
        const gen = await extendAndGenerate(
          model,
          chunk.map((i) => rows[i] as (typeof rows)[number]),
          {
            temperature: opts.temperature,
            maxTokens,
            rng,
            ...(opts.timings ? { timings: opts.timings } : {}),
            ...(opts.grammar
              ? { constraints: chunk.map(() => (opts.grammar as ActionGrammar).start()) }
              : {}),
          },
          true,
        );
        chunk.forEach((i, b) => {
          const l = active[i] as Live;
          const { episode, traj } = l;
          disposeCache(l.cache);
          l.cache = gen.caches[b] as RowCache;
          l.cachedTurns = traj.turns.length;
          const action = gen.tokens[b] as number[];
          const worldStart = performance.now();
          const text = tok.decode(action.filter((t) => t !== EOA));
          const { observation, done } = episode.step(text);
          traj.turns.push({ action, observation: observationTokens(tok, observation) });
          if (opts.timings) opts.timings.environment += (performance.now() - worldStart) / 1000;
          traj.logprobs.push(gen.logprobs[b] as number[]);
          traj.actions.push(text);
          traj.observations.push(observation);
          counts.tokens += action.length;
          if (done) {
            disposeCache(l.cache);
            l.cache = null;
            counts.finished += 1;
          }
          if (report)
            stepped.push({
              index: l.index,
              taskId: traj.taskId,
              turn: traj.turns.length,
              action: text,
              done,
            });
        });
        await report?.(stepped);
        if (opts.stop?.()) {
          // The round's later batches did not play: their context starts are not turns.
          for (const l of active) l.traj.starts.length = l.traj.turns.length;
          break rounds;
        }
      }
    }
  } finally {
    for (const l of live) disposeCache(l.cache);
  }
  return live.map(({ episode, traj }) => ({ ...traj, evaluation: episode.evaluate() }));
}
