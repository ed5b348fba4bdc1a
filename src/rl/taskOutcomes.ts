/** Each task's outcome over its rollouts: what the page's task grid and `npm run eval --json` report. */

export interface TaskOutcome {
  taskId: string;
  meanReward: number;
  successes: number;
  /** Rollouts of the task. */
  k: number;
}

/** Groups episodes by task, in the order each task first appears. */
export function taskOutcomes(
  episodes: readonly { taskId: string; reward: number; success: boolean }[],
): TaskOutcome[] {
  const byTask = new Map<string, TaskOutcome>();
  for (const e of episodes) {
    const o = byTask.get(e.taskId) ?? { taskId: e.taskId, meanReward: 0, successes: 0, k: 0 };
    o.meanReward += e.reward;
    o.successes += e.success ? 1 : 0;
    o.k += 1;
    byTask.set(e.taskId, o);
  }
  return [...byTask.values()].map((o) => ({ ...o, meanReward: o.meanReward / o.k }));
}
