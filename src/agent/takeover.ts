import { createEpisode, ERROR_PREFIX, findTask, observationBody } from "../env";
import { Rng } from "../env/rng";
import type { EpisodeText } from "./demos";
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
  // The script reads the user and date from the prompt (its first observation), then its own.
  let observation = ep.prompt;
  while (!ep.done) {
    const action = policy.act(observation);
    actions.push(action);
    observation = ep.step(action).observation;
    observations.push(observation);
  }
  const evaluation = ep.evaluate();
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
