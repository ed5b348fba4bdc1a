/**
 * The typed layer between the page and the training worker: settings (and their URL form), the
 * events the worker streams, and the API it exposes through comlink. Plain data only.
 */
import { type TestResult, TRAIN_MAX_TURNS } from "../env";
import type { BackendInfo, BackendName } from "../model/backend";
import { ALGORITHM_NAMES } from "../rl/algorithms";
import type { EvalResult } from "../rl/evaluate";
import type { TurnTokenStats } from "../rl/tokenStats";
import type { IterationMetrics, TrainerEvent } from "../rl/trainer";

export type Preset = "base" | "tiny";
export type Speed = "fast" | "normal" | "slow";

export interface Settings {
  algo: string;
  /** Rollouts per task. */
  k: number;
  /** Tasks per iteration. */
  tasks: number;
  /** Train tasks to draw from (0 = all); with pool <= tasks, the same tasks every iteration. */
  pool: number;
  lr: number;
  eps: number;
  epochs: number;
  temperature: number;
  seed: number;
  speed: Speed;
  /** base = the shipped checkpoint; tiny = a tiny untrained model (quick demos and tests). */
  preset: Preset;
  /** Turn budget per training episode (0 = the preset's: the paper's 40, the tiny model's 2). */
  turns: number;
  /** Evaluate on dev every N iterations (0 = never), on the first `evalLimit` tasks (0 = all). */
  evalEvery: number;
  evalLimit: number;
  backend: BackendName | "auto";
  /**
   * on = a grammar-constrained policy: actions are sampled (and scored) only among tokens that keep
   * them a well-formed call to an existing API (src/agent/grammar.ts). On by default: the shipped
   * base policy was trained to act under it (its checkpoint's meta.decoding).
   */
  grammar: "off" | "on";
}

export const DEFAULT_SETTINGS: Settings = {
  algo: "loop",
  k: 4,
  tasks: 8,
  pool: 0,
  // The CLI's default, which measurably raised dev reward from the shipped base (docs/results.md);
  // 1e-3 made the policy more random within five iterations on the page (reward 0.46 -> 0.38).
  lr: 0.0003,
  eps: 0.1,
  epochs: 2,
  temperature: 1,
  seed: 0,
  speed: "fast",
  preset: "base",
  turns: 0,
  evalEvery: 5,
  evalLimit: 8,
  backend: "auto",
  grammar: "on",
};

/**
 * Without a GPU an iteration of the defaults (8 tasks x 4 rollouts of the shipped base) takes
 * about 20 minutes on wasm. This pool is two train tasks the shipped base solves some of the
 * time (its per-task results on train, docs/model.md), so each iteration's 8 rollouts carry
 * signal and replay the same tasks: about 5 minutes an iteration here, and their success is
 * what LOOP raises (README).
 */
export const CPU_DEMO: Partial<Settings> = { seed: 22, pool: 2, tasks: 2, k: 4, evalEvery: 0 };

/** Pause between iterations for each speed (ms). */
/** The tiny preset's turn budget when `turns` is 0 (its untrained model would only ramble on). */
export const TINY_TURNS = 2;

/** A training episode's turn budget when `turns` is 0. */
export function defaultTurnBudget(preset: Preset): number {
  return preset === "tiny" ? TINY_TURNS : TRAIN_MAX_TURNS;
}

export const SPEED_DELAY: Record<Speed, number> = { fast: 0, normal: 500, slow: 2000 };

type Rule =
  | { kind: "int"; min: number; max: number }
  | { kind: "num"; min: number; max: number }
  | { kind: "enum"; values: readonly string[] };

export const SETTING_RULES: Record<keyof Settings, Rule> = {
  algo: { kind: "enum", values: ALGORITHM_NAMES },
  k: { kind: "int", min: 2, max: 16 },
  tasks: { kind: "int", min: 1, max: 84 },
  pool: { kind: "int", min: 0, max: 84 },
  lr: { kind: "num", min: 1e-7, max: 0.1 },
  eps: { kind: "num", min: 0.001, max: 0.99 },
  epochs: { kind: "int", min: 1, max: 8 },
  temperature: { kind: "num", min: 0.05, max: 3 },
  seed: { kind: "int", min: 0, max: 2 ** 31 - 1 },
  speed: { kind: "enum", values: ["fast", "normal", "slow"] },
  preset: { kind: "enum", values: ["base", "tiny"] },
  turns: { kind: "int", min: 0, max: 40 },
  evalEvery: { kind: "int", min: 0, max: 1000 },
  evalLimit: { kind: "int", min: 0, max: 42 },
  backend: { kind: "enum", values: ["auto", "webgpu", "webgl", "wasm", "cpu"] },
  grammar: { kind: "enum", values: ["off", "on"] },
};

const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

/** One setting from text, or an error message (the value is refused, nothing else changes). */
export function parseSetting<K extends keyof Settings>(
  key: K,
  text: string,
): { ok: true; value: Settings[K] } | { ok: false; error: string } {
  const rule = SETTING_RULES[key];
  if (rule.kind === "enum") {
    if (rule.values.includes(text)) return { ok: true, value: text as Settings[K] };
    return { ok: false, error: `${key} must be one of ${rule.values.join(", ")}` };
  }
  const n = Number(text);
  // Decimal notation only (Number() would also read "0x10", "0b1" and "" as numbers).
  if (!DECIMAL.test(text) || !Number.isFinite(n) || (rule.kind === "int" && !Number.isInteger(n)))
    return {
      ok: false,
      error: `${key} must be ${rule.kind === "int" ? "an integer" : "a number"}`,
    };
  if (n < rule.min || n > rule.max)
    return { ok: false, error: `${key} must be between ${rule.min} and ${rule.max}` };
  return { ok: true, value: n as Settings[K] };
}

/** Settings from a URL query (unknown or bad values fall back to the defaults, with the reasons). */
export function settingsFromQuery(query: string): { settings: Settings; errors: string[] } {
  const params = new URLSearchParams(query);
  const settings: Settings = { ...DEFAULT_SETTINGS };
  const errors: string[] = [];
  for (const key of Object.keys(SETTING_RULES) as (keyof Settings)[]) {
    const text = params.get(key);
    if (text === null) continue;
    const r = parseSetting(key, text);
    if (r.ok) (settings as unknown as Record<string, unknown>)[key] = r.value;
    else errors.push(r.error);
  }
  return { settings, errors };
}

/** The query that restores these settings (defaults omitted), other parameters kept. */
export function settingsToQuery(settings: Settings, query = ""): string {
  const params = new URLSearchParams(query);
  for (const key of Object.keys(SETTING_RULES) as (keyof Settings)[]) {
    if (settings[key] === DEFAULT_SETTINGS[key]) params.delete(key);
    else params.set(key, String(settings[key]));
  }
  const s = params.toString();
  return s ? `?${s}` : "";
}

/** One action token as the episode player shows it. */
export interface TokenView {
  text: string;
  logprob: number;
}

export interface TurnView {
  action: string;
  tokens: TokenView[];
  observation: string;
  /** Context start of this turn (turns before it were dropped by the context rule). */
  start: number;
  /** The apps' state changes so far (after this turn's action), described. */
  changes: string[];
}

export interface TrajectoryView {
  index: number;
  taskId: string;
  instruction: string;
  prompt: string;
  reward: number;
  success: boolean;
  advantage: number;
  baseline: number;
  kept: boolean;
  turns: TurnView[];
  tests: TestResult[];
}

export interface GroupView {
  taskId: string;
  rewards: number[];
  baselines: number[];
  advantages: number[];
  kept: boolean[];
  /** Indexes into the iteration's trajectories. */
  members: number[];
}

export type Phase = "loading" | "ready" | "running" | "paused" | "error";

export type WorkerEvent =
  | { type: "status"; phase: Phase; message: string }
  | { type: "backend"; info: BackendInfo; params: number; preset: Preset }
  | { type: "iteration-start"; iteration: number; tasks: string[] }
  /** After each batch of decoding: episodes finished, tokens sampled, the turns just taken. */
  | Extract<TrainerEvent, { type: "rollout-progress" }>
  | { type: "rollouts"; iteration: number; groups: GroupView[]; trajectories: TrajectoryView[] }
  | {
      type: "minibatch";
      iteration: number;
      index: number;
      count: number;
      epoch: number;
      loss: number;
    }
  /** Per action token of every rollout, after the iteration's update (trajectory, turn, token). */
  | { type: "token-stats"; iteration: number; stats: TurnTokenStats[][] }
  | { type: "iteration"; metrics: IterationMetrics }
  | { type: "eval"; iteration: number; result: EvalResult }
  | { type: "warning"; message: string };

export interface CheckpointInfo {
  key: string;
  ok: boolean;
  detail: string;
}

export interface ResumeInfo {
  ok: boolean;
  /** The iteration it continues from (0 when refused). */
  iteration: number;
  detail: string;
}

/**
 * Receives a batch of one run's events: `run` is the run id the worker was reset to when they were
 * emitted (null before any). After a reset the old run may still emit while it stops: a page
 * applies only its current run's events.
 */
export type EventListener = (events: WorkerEvent[], run: string | null) => void;

/** What the worker exposes (every method is async across the boundary). */
export interface TrainingApi {
  subscribe(listener: EventListener): void;
  /**
   * (Re)builds the model and trainer from settings; resolves when ready. With a run id, a resume
   * point is saved for that run after every finished iteration (see resume).
   */
  reset(settings: Settings, runId?: string): Promise<void>;
  /**
   * Rebuilds the trainer with a stored run's settings and continues it from its resume point (its
   * last finished iteration: weights, AdamW's moments, the task walk), as if it never stopped.
   */
  resume(runId: string, settings: Settings): Promise<ResumeInfo>;
  /** The runs that have a resume point, and its iteration. */
  listResumePoints(): Promise<{ runId: string; iteration: number }[]>;
  play(): Promise<void>;
  pause(): Promise<void>;
  /** Runs exactly one iteration (pausing after it). */
  step(): Promise<void>;
  /** Changes settings that apply on the fly (lr, speed); others need a reset. */
  update(settings: Settings): Promise<void>;
  saveCheckpoint(key: string): Promise<CheckpointInfo>;
  listCheckpoints(): Promise<CheckpointInfo[]>;
  loadCheckpoint(key: string): Promise<CheckpointInfo>;
  /** The current weights as one file (LOOPCKPT). */
  exportCheckpoint(): Promise<Uint8Array>;
  /** Loads weights from a file; a bad file is refused and the model is unchanged. */
  importCheckpoint(bytes: Uint8Array): Promise<CheckpointInfo>;
}
