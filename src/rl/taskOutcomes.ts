/** Each task's outcome over its rollouts: what the page's task grid and `npm run eval --json` report. */

export interface TaskOutcome {
  taskId: string;
  meanReward: number;
  successes: number;
  /** Rollouts of the task. */
  k: number;
}

/**
 * Groups episodes by task, in the order each task first appears (a task played by two groups of
 * one iteration is one outcome over both).
 */
export function taskOutcomes(
  episodes: readonly { taskId: string; evaluation: { reward: number; success: boolean } }[],
): TaskOutcome[] {
  const byTask = new Map<string, TaskOutcome>();
  for (const { taskId, evaluation } of episodes) {
    const o = byTask.get(taskId) ?? { taskId, meanReward: 0, successes: 0, k: 0 };
    o.meanReward += evaluation.reward;
    o.successes += evaluation.success ? 1 : 0;
    o.k += 1;
    byTask.set(taskId, o);
  }
  return [...byTask.values()].map((o) => ({ ...o, meanReward: o.meanReward / o.k }));
}
