/**
 * The world's public API: tasks by split, episodes, evaluation. Pure TypeScript: runs in Node and
 * in browsers alike.
 */
import { Episode, type EpisodeOptions } from "./episode";
import { findTask, taskInfo, tasksOf } from "./tasks/catalog";
import type { Split, TaskInfo } from "./tasks/types";

export { formatApiDoc, PAGE_SIZE } from "./api";
export { APPS, registry } from "./apps";
export { type Change, diffDb } from "./db";
export {
  Episode,
  type EpisodeOptions,
  EVAL_MAX_TURNS,
  type StepResult,
  TRAIN_MAX_TURNS,
  type TurnRecord,
} from "./episode";
export {
  answerMatches,
  type Evaluation,
  scenarioGoalCompletion,
  type TestResult,
  taskGoalCompletion,
  wilsonInterval,
} from "./evaluate";
export { worldFingerprint } from "./fingerprint";
export { RELATIONSHIP_PLURALS } from "./names";
export { formatAction, type ParsedCall, parseAction } from "./parser";
export { ERROR_PREFIX, observationBody } from "./prompt";
export type { Act, Actor } from "./tasks/actor";
export { ScriptError } from "./tasks/actor";
export {
  findTask,
  MAX_TRAIN_WORLDS,
  scenarioPlan,
  tasksOf,
  templateOf,
  trainWorldTasks,
  VARIANTS,
} from "./tasks/catalog";
export { TEMPLATES } from "./tasks/templates";
export {
  type Script,
  SPLITS,
  type Split,
  type Task,
  type TaskInfo,
  type TaskTemplate,
} from "./tasks/types";
export type { Db, Json, JsonObject, Person, Row } from "./types";
export { generateWorld, type World } from "./world";

/** The tasks of a split, or of every split with "all", in a fixed order with fixed ids. */
export function listTasks(split: Split | "all"): TaskInfo[] {
  const splits: Split[] =
    split === "all" ? ["train", "dev", "test_normal", "test_challenge"] : [split];
  return splits.flatMap((s) => tasksOf(s).map(taskInfo));
}

/** Starts an episode of a task. Throws only for an unknown task id. */
export function createEpisode(taskId: string, options?: EpisodeOptions): Episode {
  const task = findTask(taskId);
  if (!task) throw new Error(`Unknown task id '${taskId}'.`);
  return new Episode(task, options);
}
