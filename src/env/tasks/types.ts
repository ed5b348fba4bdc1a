import type { Change } from "../db";
import type { Rng } from "../rng";
import type { Db, Json, JsonObject } from "../types";
import type { World } from "../world";
import type { Actor } from "./actor";

export const SPLITS = ["train", "dev", "test_normal", "test_challenge"] as const;
export type Split = (typeof SPLITS)[number];
export type Difficulty = 1 | 2 | 3;

/** What listTasks returns for each task. */
export interface TaskInfo {
  id: string;
  scenarioId: string;
  templateId: string;
  split: Split;
  /** 0, 1 or 2: the task's variant within its scenario. */
  variant: number;
  difficulty: Difficulty;
  instruction: string;
  /** Apps the task needs besides supervisor and api_docs. */
  apps: string[];
}

/** One change the task asks for: exactly one row-level change must match. */
export interface ExpectedChange {
  /** The unit test's name, e.g. "sent 25 to bo.chen@mail.com". */
  name: string;
  match: (change: Change) => boolean;
}

/**
 * A task's state-based unit tests, fixed when the task is built from the initial database:
 * the requested changes (each exactly once), no other change except allowed side effects, and the
 * answer where one is asked for.
 */
export interface Expectation {
  changes: ExpectedChange[];
  /** Side effects that come with the requested changes (e.g. balances after a payment). */
  allow?: (change: Change) => boolean;
  /** Expected answer: a string, a number (compared to the cent) or a list (compared as a set). */
  answer?: string | number | string[];
}

/** What a template makes of a world for one variant. */
export interface TemplateInstance {
  instruction: string;
  /** Only values the instruction states: all a solution script may know besides observations. */
  params: JsonObject;
  expect: Expectation;
}

/** A solution script: yields actions, receives observations, acts through an Actor. */
export type Script = Generator<string, void, string>;

export interface TaskTemplate {
  id: string;
  difficulty: Difficulty;
  apps: string[];
  /** Used only in test_challenge (unseen templates). */
  challenge?: boolean;
  /** Chooses the variant's parameters; may add rows to world.db so that the task is well-posed. */
  build(world: World, rng: Rng, variant: number): TemplateInstance;
  /** Solves the task from observations only, using params (the instruction's values). */
  solve(actor: Actor, params: JsonObject): Script;
}

/** A fully built task: its info, initial database and tests. */
export interface Task extends TaskInfo {
  world: World;
  params: JsonObject;
  expect: Expectation;
}

export type { Change, Db, Json };
