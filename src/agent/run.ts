import type { Episode, Evaluation } from "../env";
import type { Policy } from "./policy";

export interface EpisodeRun {
  taskId: string;
  actions: string[];
  observations: string[];
  evaluation: Evaluation;
}

/** Plays a policy in an episode until it ends (complete_task or the turn budget). */
export function runEpisode(episode: Episode, policy: Policy): EpisodeRun {
  const actions: string[] = [];
  const observations: string[] = [];
  let observation = episode.prompt;
  while (!episode.done) {
    const action = policy.act(observation);
    actions.push(action);
    observation = episode.step(action).observation;
    observations.push(observation);
  }
  return { taskId: episode.task.id, actions, observations, evaluation: episode.evaluate() };
}
