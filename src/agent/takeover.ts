import { createEpisode, ERROR_PREFIX, findTask, observationBody } from "../env";
import { Rng } from "../env/rng";
import type { GPT } from "../model/gpt";
import type { Tokenizer } from "../model/tokenizer";
import type { EpisodeText } from "./demos";
import type { ActionGrammar } from "./grammar";
import { rollout } from "./modelRollout";
import { runEpisode } from "./run";
import { NO_FLAWS, ScriptActor } from "./scriptActor";
import { ScriptPolicy } from "./scripted";

/** The turns of an episode someone played (a policy's rollout), as text. */
export interface PlayedEpisode {
  taskId: string;
  actions: readonly string[];
  observations: readonly string[];
}

/**
 * Expert takeover, the relabelling step of DAgger (Ross et al., 2011): replays the first `k` turns
 * of a played episode (the learner's own states, mistakes included), then lets the expert finish
 * from there. The expert knows what those turns found out (ScriptActor.observeHistory: passwords,
 * tokens, docs) and otherwise runs the task's solution script. The learner's turns are context only
 * (`slips`, not imitated); the expert's are the labels. Returns null when the replay ends the
 * episode before turn `k` (nothing left to take over). Throws if the replay does not reproduce the
 * recorded observations (the world is deterministic, so that is a bug or another world version).
 */
export function takeover(
  played: PlayedEpisode,
  k: number,
  mode: "train" | "eval" = "train",
): EpisodeText | null {
  const task = findTask(played.taskId);
  if (!task) throw new Error(`Unknown task id '${played.taskId}'.`);
  if (!Number.isInteger(k) || k < 0 || k > played.actions.length)
    throw new Error(`takeover turn ${k} is outside the episode's ${played.actions.length} turns`);
  const ep = createEpisode(played.taskId, { mode });
  const actions: string[] = [];
  const observations: string[] = [];
  for (let i = 0; i < k; i++) {
    const action = played.actions[i] as string;
    const { observation } = ep.step(action);
    if (observation !== played.observations[i])
      throw new Error(`${played.taskId}: turn ${i} replayed to another observation`);
    actions.push(action);
    observations.push(observation);
    if (ep.done) return null;
  }
  const actor = new ScriptActor(NO_FLAWS);
  actor.observeHistory(actions, observations);
  const policy = new ScriptPolicy("expert", task, actor);
  // runEpisode starts the script on the prompt (it reads the user and date there), then its own.
  const { evaluation, ...run } = runEpisode(ep, policy);
  actions.push(...run.actions);
  observations.push(...run.observations);
  return {
    taskId: played.taskId,
    prompt: ep.prompt,
    actions,
    observations,
    reward: evaluation.reward,
    success: evaluation.success,
    slips: [...Array.from({ length: k }, (_, i) => i), ...actor.slips.map((t) => t + k)],
  };
}

/** The turn after the first failed call (the state that needs a recovery), or null if none failed. */
export function afterFirstError(played: PlayedEpisode): number | null {
  const i = played.observations.findIndex((o) => observationBody(o).startsWith(ERROR_PREFIX));
  return i >= 0 && i + 1 < played.actions.length ? i + 1 : null;
}

/**
 * Takeover points of a played episode: right after its first failed call, and one more turn drawn
 * at random from the rest (seeded by `seed` and the task), without repeats.
 */
export function takeoverPoints(played: PlayedEpisode, seed: number): number[] {
  const n = played.actions.length;
  if (n < 2) return [];
  const first = afterFirstError(played);
  const rng = Rng.derive(seed, `takeover/${played.taskId}`);
  const random = rng.int(1, n - 1);
  return [...new Set(first === null ? [random] : [first, random])];
}

export interface TakeoverOptions {
  /** Seed of the task order, the samplers and the takeover points. */
  seed: number;
  /** The first `offset` tasks of the seeded order are skipped (another batch's). */
  offset: number;
  temperature: number;
  grammar?: ActionGrammar;
  /** Caps on the rollouts (tests keep them short); default: the train mode's. */
  maxTurns?: number;
  maxActionTokens?: number;
}

export interface TakeoverBatch {
  /** The policy's own rollouts, as played. */
  rollouts: (PlayedEpisode & { reward: number; success: boolean })[];
  /** Takeovers tried (a replay that ended the episode is not one). */
  tried: number;
  /** The successful takeovers: the episodes to imitate. */
  episodes: EpisodeText[];
}

/** Rollouts decoded together (one wave of `rollout`); also how often `onWave` reports. */
const WAVE = 16;

/**
 * Rolls the policy out (train mode) on `count` tasks of `taskIds` in a seeded order, after the
 * first `offset`, and keeps the successful expert takeovers of each rollout (`takeoverPoints`).
 * Same model, tasks and options on the same backend: the same episodes.
 */
export async function collectTakeovers(
  model: GPT,
  tok: Tokenizer,
  taskIds: readonly string[],
  count: number,
  opts: TakeoverOptions,
  onWave?: (done: TakeoverBatch) => void | Promise<void>,
): Promise<TakeoverBatch> {
  const ids = Rng.derive(opts.seed, "takeover/tasks")
    .shuffle(taskIds)
    .slice(opts.offset, opts.offset + count);
  const batch: TakeoverBatch = { rollouts: [], tried: 0, episodes: [] };
  for (let i = 0; i < ids.length; i += WAVE) {
    const trajectories = await rollout(model, tok, ids.slice(i, i + WAVE), {
      temperature: opts.temperature,
      seed: opts.seed * 1_000_003 + opts.offset + i,
      mode: "train",
      ...(opts.grammar ? { grammar: opts.grammar } : {}),
      ...(opts.maxTurns ? { maxTurns: opts.maxTurns } : {}),
      ...(opts.maxActionTokens ? { maxActionTokens: opts.maxActionTokens } : {}),
    });
    for (const t of trajectories) {
      const played = { taskId: t.taskId, actions: t.actions, observations: t.observations };
      batch.rollouts.push({
        ...played,
        reward: t.evaluation.reward,
        success: t.evaluation.success,
      });
      for (const k of takeoverPoints(played, opts.seed)) {
        const ep = takeover(played, k);
        if (!ep) continue;
        batch.tried++;
        if (ep.success) batch.episodes.push(ep);
      }
    }
    await onWave?.(batch);
  }
  return batch;
}
