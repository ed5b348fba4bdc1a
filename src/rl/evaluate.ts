import type { ActionGrammar } from "../agent/grammar";
import { type RolloutOptions, rollout, type Trajectory } from "../agent/modelRollout";
import {
  listTasks,
  type Split,
  scenarioGoalCompletion,
  type TaskInfo,
  taskGoalCompletion,
  wilsonInterval,
} from "../env";
import type { GPT } from "../model/gpt";
import type { Tokenizer } from "../model/tokenizer";
import { type BehaviourStats, behaviourStats } from "./behaviour";
import { type TaskOutcome, taskOutcomes } from "./taskOutcomes";

export interface EvalOptions {
  /** 0 = greedy. */
  temperature: number;
  seed: number;
  /** Rollouts per task. */
  samples?: number;
  /** Only the first N tasks of the split (0 = all). */
  limit?: number;
  /** Only these tasks of the split, in this order (before `limit`). */
  tasks?: readonly string[];
  batchSize?: number;
  maxTurns?: number;
  maxActionTokens?: number;
  /** Decode every action under this action grammar. */
  grammar?: ActionGrammar;
  /** Passed to the rollouts: awaited after every batch of decoding (a host's event loop turn). */
  onRound?: RolloutOptions["onRound"];
  /** Passed to the rollouts: ends them early (the result then covers unplayed episodes: discard it). */
  stop?: RolloutOptions["stop"];
}

export interface EvalResult {
  split: Split;
  temperature: number;
  samples: number;
  tasks: number;
  /** % of tasks (rollouts) whose tests all pass, as a fraction. */
  tgc: number;
  /** A 95% interval for tgc (Wilson, over every rollout: conservative for this set of tasks). */
  tgcInterval: [number, number];
  /** Fraction of scenarios whose every task passes. */
  sgc: number;
  reward: number;
  turns: number;
  byDifficulty: Record<string, number>;
  /** TGC of each template's rollouts, templates in the order their tasks were played. */
  byTemplate: Record<string, number>;
  behaviour: BehaviourStats;
  /** Each task's successes and mean reward over its samples. */
  perTask: TaskOutcome[];
  seconds: number;
}

/**
 * The tasks of a split an evaluation plays: `ids` (each must be one of the split's; an unknown id
 * is an error naming it) or the whole split, then the first `limit` (0 = all).
 */
export function evalTasks(split: Split, ids?: readonly string[], limit = 0): TaskInfo[] {
  const all = listTasks(split);
  let tasks = all;
  if (ids?.length) {
    const byId = new Map(all.map((t) => [t.id, t]));
    const unknown = ids.filter((id) => !byId.has(id));
    if (unknown.length)
      throw new Error(
        `not ${split} task${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")} (e.g. ${all[0]?.id})`,
      );
    tasks = ids.map((id) => byId.get(id) as TaskInfo);
  }
  return limit > 0 ? tasks.slice(0, limit) : tasks;
}

/** Runs the policy on a split in the evaluation setting (50 turns) and scores it. */
export async function evaluatePolicy(
  model: GPT,
  tok: Tokenizer,
  split: Split,
  opts: EvalOptions,
): Promise<{ result: EvalResult; trajectories: Trajectory[] }> {
  const samples = opts.samples ?? 1;
  const tasks = evalTasks(split, opts.tasks, opts.limit);
  const ids = tasks.flatMap((t) => Array.from({ length: samples }, () => t.id));
  const t0 = performance.now();
  const trajectories = await rollout(model, tok, ids, {
    temperature: opts.temperature,
    seed: opts.seed,
    mode: "eval",
    batchSize: opts.batchSize ?? 8,
    ...(opts.maxTurns ? { maxTurns: opts.maxTurns } : {}),
    ...(opts.maxActionTokens ? { maxActionTokens: opts.maxActionTokens } : {}),
    ...(opts.grammar ? { grammar: opts.grammar } : {}),
    ...(opts.onRound ? { onRound: opts.onRound } : {}),
    ...(opts.stop ? { stop: opts.stop } : {}),
  });
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const results = trajectories.map((t) => ({
    scenarioId: byId.get(t.taskId)?.scenarioId ?? t.taskId,
    templateId: byId.get(t.taskId)?.templateId ?? t.taskId,
    difficulty: byId.get(t.taskId)?.difficulty ?? 0,
    success: t.evaluation.success,
    reward: t.evaluation.reward,
    turns: t.turns.length,
  }));
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  return {
    trajectories,
    result: {
      split,
      temperature: opts.temperature,
      samples,
      tasks: tasks.length,
      tgc: taskGoalCompletion(results),
      tgcInterval: wilsonInterval(results.filter((r) => r.success).length, results.length),
      sgc: scenarioGoalCompletion(results),
      reward: mean(results.map((r) => r.reward)),
      turns: mean(results.map((r) => r.turns)),
      byDifficulty: tgcBy(results, (r) => String(r.difficulty)),
      byTemplate: tgcBy(results, (r) => r.templateId),
      behaviour: behaviourStats(trajectories.map(episodeText)),
      perTask: taskOutcomes(trajectories),
      seconds: (performance.now() - t0) / 1000,
    },
  };
}

/** TGC of each group of results (by difficulty, by template), groups in the order first met. */
export function tgcBy<R extends { success: boolean }>(
  results: readonly R[],
  key: (r: R) => string,
): Record<string, number> {
  const groups = new Map<string, R[]>();
  for (const r of results) {
    const k = key(r);
    const group = groups.get(k);
    if (group) group.push(r);
    else groups.set(k, [r]);
  }
  return Object.fromEntries([...groups].map(([k, rs]) => [k, taskGoalCompletion(rs)]));
}

/** A trajectory's text for the behaviour statistics. */
export function episodeText(t: Trajectory): {
  prompt: string;
  actions: string[];
  observations: string[];
} {
  return { prompt: t.promptText, actions: t.actions, observations: t.observations };
}
