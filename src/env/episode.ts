import type { RuntimeState } from "./api";
import { registry } from "./apps";
import { cloneDb } from "./db";
import { type Evaluation, runTests } from "./evaluate";
import { parseAction } from "./parser";
import {
  ERROR_PREFIX,
  formatObservation,
  formatPrompt,
  OBSERVATION_LIMIT,
  truncate,
} from "./prompt";
import { hashString } from "./rng";
import type { Task } from "./tasks/types";
import type { Db, Json } from "./types";

/** Turn budgets from the paper: 40 interactions in training, 50 in evaluation. */
export const TRAIN_MAX_TURNS = 40;
export const EVAL_MAX_TURNS = 50;

export interface EpisodeOptions {
  /** "train" (default, 40 turns) or "eval" (50 turns); maxTurns overrides both. */
  mode?: "train" | "eval";
  maxTurns?: number;
  /** Characters an observation's result may have before it is cut (default 1200). */
  observationLimit?: number;
  /** Re-append the task after each observation (default true, as in the paper). */
  reminder?: boolean;
}

export interface StepResult {
  observation: string;
  done: boolean;
}

export interface TurnRecord {
  action: string;
  observation: string;
  /** False when the action failed: parse error, unknown API, bad argument, API error. */
  ok: boolean;
}

/**
 * One task attempt, the POMDP the agent lives in: the prompt is the first observation; each step
 * takes an action text and returns the next observation. Never throws on any action text.
 */
export class Episode {
  readonly task: Task;
  readonly prompt: string;
  readonly maxTurns: number;
  readonly turns: TurnRecord[] = [];
  private readonly initial: Db;
  private readonly state: RuntimeState;
  private readonly limit: number;
  private readonly reminder: boolean;

  constructor(task: Task, options: EpisodeOptions = {}) {
    this.task = task;
    this.maxTurns =
      options.maxTurns ?? (options.mode === "eval" ? EVAL_MAX_TURNS : TRAIN_MAX_TURNS);
    this.limit = options.observationLimit ?? OBSERVATION_LIMIT;
    this.reminder = options.reminder ?? true;
    this.initial = task.world.db;
    this.state = {
      db: cloneDb(task.world.db),
      sessions: new Map(),
      clock: 0,
      today: task.world.today,
      tokenCounter: 0,
      tokenSalt: hashString(task.id),
      completed: false,
      answer: null,
    };
    this.prompt = formatPrompt(task.world.user, task.world.today, task.instruction);
  }

  get done(): boolean {
    return this.state.completed || this.turns.length >= this.maxTurns;
  }

  get completed(): boolean {
    return this.state.completed;
  }

  get answer(): Json {
    return this.state.answer;
  }

  /** The database now (a copy: callers cannot change the episode through it). */
  get db(): Db {
    return cloneDb(this.state.db);
  }

  get initialDb(): Db {
    return cloneDb(this.initial);
  }

  step(action: string): StepResult {
    if (this.done) return { observation: `${ERROR_PREFIX}the episode is over.`, done: true };
    const text = typeof action === "string" ? action : String(action);
    const parsed = parseAction(text);
    let body: string;
    let ok = false;
    if (!parsed.ok) body = `${ERROR_PREFIX}${parsed.error}`;
    else {
      const result = registry.call(this.state, parsed.call);
      ok = result.ok;
      body = result.ok
        ? typeof result.result === "string"
          ? result.result
          : JSON.stringify(result.result)
        : `${ERROR_PREFIX}${result.error}`;
    }
    body = truncate(body, this.limit);
    const turnsLeft = this.maxTurns - this.turns.length - 1;
    let observation: string;
    if (this.state.completed) observation = body;
    else if (turnsLeft <= 0) observation = `${body}\nTurn budget exhausted: the task failed.`;
    else observation = formatObservation(body, this.task.instruction, this.reminder);
    this.turns.push({ action: text, observation, ok });
    return { observation, done: this.done };
  }

  /** The state-based unit tests on the database now (runnable at any time, final at the end). */
  evaluate(): Evaluation {
    return runTests(
      this.task.expect,
      this.initial,
      this.state.db,
      this.state.answer,
      this.state.completed,
    );
  }
}
