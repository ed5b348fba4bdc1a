import { createEpisode, type Split, type Task, TEMPLATES, tasksOf } from "../env";
import type { Tokenizer } from "../model/tokenizer";
import { createDemonstrator } from "./demonstrator";
import { runEpisode } from "./run";
import type { Flaws } from "./scriptActor";
import {
  actionTokens,
  ContextTracker,
  contextBudget,
  observationTokens,
  promptTokens,
  type TurnTokens,
} from "./transcript";

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

/**
 * The policy's context, for a demonstrator that forgets what has left it (ScriptActor): its
 * vocabulary and context length.
 */
export interface PolicyContext {
  tokenizer: Tokenizer;
  context: number;
}

/**
 * Demonstrator episodes over a split (or a list of tasks), one per task per seed. With `policy`,
 * the demonstrator looks a password or access token up again once it has left that context.
 */
export function collectDemonstrations(
  split: Split | readonly Task[],
  seeds: readonly number[],
  flaws?: Partial<Flaws>,
  policy?: PolicyContext,
): EpisodeText[] {
  const tasks = typeof split === "string" ? tasksOf(split) : split;
  const out: EpisodeText[] = [];
  for (const seed of seeds)
    for (const task of tasks) {
      const ep = createEpisode(task.id);
      const tracker = policy
        ? new ContextTracker(policy.tokenizer, contextBudget(policy.context))
        : null;
      const demonstrator = createDemonstrator(task, seed, flaws, tracker);
      const run = runEpisode(ep, demonstrator);
      out.push({
        taskId: task.id,
        prompt: ep.prompt,
        actions: run.actions,
        observations: run.observations,
        reward: run.evaluation.reward,
        success: run.evaluation.success,
        slips: [...demonstrator.slips],
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

/**
 * Reads episodes written one JSON object a line (`npm run takeover`'s output). A line that is not
 * an EpisodeText (a missing or mistyped field, observations not matching the actions, a slip turn
 * outside the episode) is refused with its line number; nothing is returned then.
 */
export function parseEpisodeLines(text: string, source = "episodes"): EpisodeText[] {
  const out: EpisodeText[] = [];
  const isStrings = (x: unknown): x is string[] =>
    Array.isArray(x) && x.every((s) => typeof s === "string");
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    const where = `${source} line ${i + 1}`;
    let e: Partial<EpisodeText>;
    try {
      e = JSON.parse(line) as Partial<EpisodeText>;
    } catch {
      throw new Error(`${where}: not JSON`);
    }
    if (typeof e !== "object" || e === null) throw new Error(`${where}: not an object`);
    if (typeof e.taskId !== "string" || typeof e.prompt !== "string")
      throw new Error(`${where}: taskId and prompt must be strings`);
    if (!isStrings(e.actions) || !isStrings(e.observations))
      throw new Error(`${where}: actions and observations must be lists of strings`);
    if (e.actions.length !== e.observations.length)
      throw new Error(
        `${where}: ${e.actions.length} actions but ${e.observations.length} observations`,
      );
    if (typeof e.reward !== "number" || typeof e.success !== "boolean")
      throw new Error(`${where}: reward must be a number and success a boolean`);
    const n = e.actions.length;
    if (!Array.isArray(e.slips) || !e.slips.every((t) => Number.isInteger(t) && t >= 0 && t < n))
      throw new Error(`${where}: slips must be turn indices within the episode`);
    out.push({
      taskId: e.taskId,
      prompt: e.prompt,
      actions: e.actions,
      observations: e.observations,
      reward: e.reward,
      success: e.success,
      slips: e.slips,
    });
  });
  return out;
}

/**
 * Parses per-template weights written as `template=K,...` (e.g. `todo_create=4,notes_append=4`):
 * K a whole number of at least 1, each name a task template's id. Throws naming the bad part.
 */
export function parseTemplateWeights(spec: string): Map<string, number> {
  const ids = TEMPLATES.map((t) => t.id);
  const out = new Map<string, number>();
  for (const part of spec.split(",")) {
    if (part.trim() === "") continue;
    const m = /^\s*(\w+)\s*=\s*(\d+)\s*$/.exec(part);
    if (!m) throw new Error(`bad template weight '${part}': write template=K, e.g. todo_create=4`);
    const [, name, value] = m as unknown as [string, string, string];
    if (!ids.includes(name))
      throw new Error(`unknown template '${name}': one of ${ids.join(", ")}`);
    const k = Number(value);
    if (k < 1) throw new Error(`template weight '${part}' must be a whole number of at least 1`);
    out.set(name, k);
  }
  if (out.size === 0) throw new Error("no template weight given: write template=K,...");
  return out;
}

/**
 * Each episode `weights.get(its template)` times (once when unnamed), in order: the data mix of
 * behaviour cloning, when some templates' decisions are too rare in the plain mix to be learnt.
 */
export function repeatByTemplate<E extends { taskId: string }>(
  episodes: readonly E[],
  weights: ReadonlyMap<string, number>,
): E[] {
  return episodes.flatMap((e) =>
    Array.from({ length: weights.get(templateIdOf(e.taskId)) ?? 1 }, () => e),
  );
}

/** The template of a task id (`todo_create.train3.1` -> `todo_create`). */
export function templateIdOf(taskId: string): string {
  return taskId.split(".")[0] as string;
}
