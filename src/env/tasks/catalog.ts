import { cloneDb } from "../db";
import { hashString, Rng } from "../rng";
import { generateWorld, type World } from "../world";
import { TEMPLATES } from "./templates";
import { SPLITS, type Split, type Task, type TaskInfo, type TaskTemplate } from "./types";

/** Tasks per scenario: AppWorld's structure. */
export const VARIANTS = 3;

/**
 * Which scenarios each template contributes to each split. Normal templates: one train and one
 * test_normal scenario each, and a dev scenario for every other template; challenge templates:
 * two test_challenge scenarios each.
 */
export function scenarioPlan(
  templates: readonly TaskTemplate[],
): { template: TaskTemplate; split: Split; index: number }[] {
  const plan: { template: TaskTemplate; split: Split; index: number }[] = [];
  let normal = 0;
  for (const template of templates) {
    if (template.challenge) {
      plan.push(
        { template, split: "test_challenge", index: 0 },
        { template, split: "test_challenge", index: 1 },
      );
      continue;
    }
    plan.push({ template, split: "train", index: 0 });
    if (normal % 2 === 0) plan.push({ template, split: "dev", index: 0 });
    plan.push({ template, split: "test_normal", index: 0 });
    normal++;
  }
  return plan;
}

function buildScenario(template: TaskTemplate, split: Split, index: number): Task[] {
  const scenarioId = `${template.id}.${split}${index}`;
  const base: World = generateWorld(hashString(scenarioId));
  const tasks: Task[] = [];
  for (let variant = 0; variant < VARIANTS; variant++) {
    const world: World = { ...base, db: cloneDb(base.db) };
    const rng = Rng.derive(scenarioId, `variant${variant}`);
    const inst = template.build(world, rng, variant);
    tasks.push({
      id: `${scenarioId}.${variant}`,
      scenarioId,
      templateId: template.id,
      split,
      variant,
      difficulty: template.difficulty,
      instruction: inst.instruction,
      apps: template.apps.slice(),
      world,
      params: inst.params,
      expect: inst.expect,
    });
  }
  return tasks;
}

const cache = new Map<Split, Task[]>();

function isSplit(name: string): name is Split {
  return (SPLITS as readonly string[]).includes(name);
}

/** All built tasks of a split (built once, then cached). */
export function tasksOf(split: Split): Task[] {
  if (!isSplit(split)) throw new Error(`Unknown split '${split}'. Splits: ${SPLITS.join(", ")}.`);
  let tasks = cache.get(split);
  if (!tasks) {
    tasks = scenarioPlan(TEMPLATES)
      .filter((s) => s.split === split)
      .flatMap((s) => buildScenario(s.template, s.split, s.index));
    cache.set(split, tasks);
  }
  return tasks;
}

export function templateOf(task: TaskInfo): TaskTemplate {
  const t = TEMPLATES.find((x) => x.id === task.templateId);
  if (!t) throw new Error(`No template '${task.templateId}'.`);
  return t;
}

/**
 * More training data from the train split alone: the train scenarios' templates instantiated again
 * on fresh worlds (`<template>.train<w>`, w = 1..worlds; the split's own tasks are w = 0). New
 * people, passwords, amounts and access tokens in each world, so a policy cloned from them has to
 * copy values from its observations instead of memorizing the 28 train worlds. The scenario ids
 * never collide with dev or test ones (those are `.dev0`, `.test_normal0`, ...), and their worlds
 * are seeded from the id like every other scenario's.
 */
export function trainWorldTasks(worlds: number): Task[] {
  if (!Number.isInteger(worlds) || worlds < 0)
    throw new Error(`worlds must be a non-negative integer, got ${worlds}`);
  const templates = trainTemplates();
  const out: Task[] = [];
  for (let w = 1; w <= worlds; w++) for (const t of templates) out.push(...scenarioTasks(t, w));
  return out;
}

let trainTemplateList: TaskTemplate[] | null = null;

/** The templates with a train scenario, in plan order (computed once). */
function trainTemplates(): TaskTemplate[] {
  trainTemplateList ??= scenarioPlan(TEMPLATES)
    .filter((s) => s.split === "train")
    .map((s) => s.template);
  return trainTemplateList;
}

const extraScenarios = new Map<string, Task[]>();

/** A re-seeded train scenario's tasks (built once, then cached). */
function scenarioTasks(template: TaskTemplate, index: number): Task[] {
  const key = `${template.id}.train${index}`;
  let tasks = extraScenarios.get(key);
  if (!tasks) {
    tasks = buildScenario(template, "train", index);
    extraScenarios.set(key, tasks);
  }
  return tasks;
}

/** The task with this id (the splits' tasks and re-seeded train worlds), or undefined. */
export function findTask(id: string): Task | undefined {
  const m = /^(.+)\.(train|dev|test_normal|test_challenge)(\d+)\.\d+$/.exec(id);
  if (!m) return undefined;
  const split = m[2] as Split;
  const index = Number(m[3]);
  if (split === "train" && index > 0) {
    const template = trainTemplates().find((t) => t.id === m[1]);
    if (!template || index > MAX_TRAIN_WORLDS) return undefined;
    return scenarioTasks(template, index).find((t) => t.id === id);
  }
  return tasksOf(split).find((t) => t.id === id);
}

/** The most re-seeded train worlds a task id may name. */
export const MAX_TRAIN_WORLDS = 10_000;

/** The public view of a task. */
export function taskInfo(t: Task): TaskInfo {
  const { id, scenarioId, templateId, split, variant, difficulty, instruction, apps } = t;
  return {
    id,
    scenarioId,
    templateId,
    split,
    variant,
    difficulty,
    instruction,
    apps: apps.slice(),
  };
}
