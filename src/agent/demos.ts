import { createEpisode, type Split, type Task, tasksOf } from "../env";
import type { Tokenizer } from "../model/tokenizer";
import { createDemonstrator } from "./demonstrator";
import { runEpisode } from "./run";
import type { Flaws } from "./scriptActor";
import { actionTokens, observationTokens, promptTokens, type TurnTokens } from "./transcript";

/** An episode as text: what a transcript is built from. */
export interface EpisodeText {
  taskId: string;
  prompt: string;
  actions: string[];
  observations: string[];
  reward: number;
  success: boolean;
  /** The turns whose actions are not to be imitated (the demonstrator's slips). */
  slips: number[];
}

/** Demonstrator episodes over a split (or a list of tasks), one per task per seed. */
export function collectDemonstrations(
  split: Split | readonly Task[],
  seeds: readonly number[],
  flaws?: Partial<Flaws>,
): EpisodeText[] {
  const tasks = typeof split === "string" ? tasksOf(split) : split;
  const out: EpisodeText[] = [];
  for (const seed of seeds)
    for (const task of tasks) {
      const ep = createEpisode(task.id);
      const policy = createDemonstrator(task, seed, flaws);
      const run = runEpisode(ep, policy);
      out.push({
        taskId: task.id,
        prompt: ep.prompt,
        actions: run.actions,
        observations: run.observations,
        reward: run.evaluation.reward,
        success: run.evaluation.success,
        slips: [...policy.slips],
      });
    }
  return out;
}

/** The token transcript of a text episode (the same format rollouts produce). */
export function tokenizeEpisode(
  tok: Tokenizer,
  ep: EpisodeText,
): { prompt: number[]; turns: TurnTokens[] } {
  return {
    prompt: promptTokens(tok, ep.prompt),
    turns: ep.actions.map((a, i) => ({
      action: actionTokens(tok, a),
      observation: observationTokens(tok, ep.observations[i] ?? ""),
      ...(ep.slips.includes(i) ? { imitate: false } : {}),
    })),
  };
}

/** All the text of some episodes, for building a vocabulary. */
export function episodeCorpus(episodes: readonly EpisodeText[]): string[] {
  return episodes.flatMap((e) => [e.prompt, ...e.actions, ...e.observations]);
}
