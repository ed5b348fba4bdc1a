/** The page's training state (zustand): fed by batches of worker events, read by the views. */
import { create } from "zustand";
import type { SteppedEpisode } from "../../agent/modelRollout";
import type { BackendInfo } from "../../model/backend";
import type { EvalResult } from "../../rl/evaluate";
import type { TurnTokenStats } from "../../rl/tokenStats";
import type { IterationMetrics } from "../../rl/trainer";
import {
  type GroupView,
  type Phase,
  type Preset,
  type Settings,
  settingsFromQuery,
  type TrajectoryView,
  type WorkerEvent,
} from "../../worker/protocol";
import { RUN_FORMAT, type RunRecord } from "./runs";

/** The rollouts of the iteration in progress (or the last one), as they are sampled. */
export interface LiveRollouts {
  iteration: number;
  finished: number;
  total: number;
  tokens: number;
  seconds: number;
  /** Each episode's task, turns taken and latest action, by index (once it has taken a turn). */
  episodes: (SteppedEpisode | undefined)[];
}

export type Colouring = "logprob" | "advantage" | "ratio" | "clipped" | "entropy";

export interface TrainState {
  settings: Settings;
  settingsErrors: string[];
  phase: Phase;
  message: string;
  backend: { info: BackendInfo; params: number; preset: Preset } | null;
  /** Iteration in progress (started) and the last one done. */
  started: number;
  done: number;
  minibatch: { index: number; count: number; epoch: number } | null;
  live: LiveRollouts | null;
  metrics: IterationMetrics[];
  evals: { iteration: number; result: EvalResult }[];
  rolloutIteration: number;
  groups: GroupView[];
  trajectories: TrajectoryView[];
  /** Ratio, entropy and clip per action token of this iteration's rollouts, after its update. */
  tokenStats: { iteration: number; stats: TurnTokenStats[][] } | null;
  group: number;
  trajectory: number;
  turn: number;
  colouring: Colouring;
  warnings: string[];
  run: RunRecord;
  overlay: RunRecord | null;
  apply(events: WorkerEvent[]): void;
  setSettings(s: Settings): void;
  newRun(settings: Settings): void;
  /** Makes a stored run the current one again, as of its iteration `at` (what follows is dropped). */
  continueRun(run: RunRecord, at: number): void;
  select(p: Partial<Pick<TrainState, "group" | "trajectory" | "turn" | "colouring">>): void;
  setOverlay(run: RunRecord | null): void;
}

export function freshRun(settings: Settings): RunRecord {
  const createdAt = new Date().toISOString();
  return {
    format: RUN_FORMAT,
    id: `run-${createdAt}-${Math.random().toString(36).slice(2, 8)}`,
    name: `${settings.algo} seed ${settings.seed} (${createdAt.slice(0, 16).replace("T", " ")})`,
    createdAt,
    settings,
    metrics: [],
    evals: [],
    samples: [],
  };
}

/** What a new or continued run shows before its next iteration: no rollouts, no selection. */
const noIterationViews = {
  groups: [],
  trajectories: [],
  tokenStats: null,
  minibatch: null,
  live: null,
  group: 0,
  trajectory: 0,
  turn: 0,
  warnings: [],
} satisfies Partial<TrainState>;

const initial = settingsFromQuery(typeof location === "undefined" ? "" : location.search);

export const useTrain = create<TrainState>((set) => ({
  settings: initial.settings,
  settingsErrors: initial.errors,
  phase: "loading",
  message: "starting the worker",
  backend: null,
  started: 0,
  done: 0,
  minibatch: null,
  live: null,
  metrics: [],
  evals: [],
  rolloutIteration: 0,
  groups: [],
  trajectories: [],
  tokenStats: null,
  group: 0,
  trajectory: 0,
  turn: 0,
  colouring: "logprob",
  warnings: [],
  run: freshRun(initial.settings),
  overlay: null,
  apply: (events) =>
    set((s) => {
      const next: Partial<TrainState> = {};
      let metrics = s.metrics;
      let evals = s.evals;
      let run = s.run;
      for (const e of events) {
        switch (e.type) {
          case "status":
            next.phase = e.phase;
            next.message = e.message;
            break;
          case "backend":
            next.backend = { info: e.info, params: e.params, preset: e.preset };
            break;
          case "iteration-start":
            next.started = e.iteration;
            next.minibatch = null;
            break;
          case "rollout-progress": {
            const prev = next.live ?? s.live;
            const episodes =
              prev?.iteration === e.iteration
                ? prev.episodes.slice()
                : new Array<SteppedEpisode | undefined>(e.total);
            for (const x of e.stepped) episodes[x.index] = x;
            next.live = {
              iteration: e.iteration,
              finished: e.finished,
              total: e.total,
              tokens: e.tokens,
              seconds: e.seconds,
              episodes,
            };
            break;
          }
          case "rollouts":
            next.rolloutIteration = e.iteration;
            next.groups = e.groups;
            next.trajectories = e.trajectories;
            next.group = Math.min(s.group, Math.max(0, e.groups.length - 1));
            next.trajectory = e.groups[next.group]?.members[0] ?? 0;
            next.turn = 0;
            run = { ...run, samples: e.trajectories.slice(0, 8) };
            break;
          case "token-stats":
            next.tokenStats = { iteration: e.iteration, stats: e.stats };
            break;
          case "minibatch":
            next.minibatch = { index: e.index, count: e.count, epoch: e.epoch };
            break;
          case "iteration":
            metrics = [...metrics, e.metrics];
            next.done = e.metrics.iteration;
            run = { ...run, metrics };
            break;
          case "eval":
            evals = [...evals, { iteration: e.iteration, result: e.result }];
            run = { ...run, evals };
            break;
          case "warning":
            next.warnings = [...(next.warnings ?? s.warnings), e.message].slice(-5);
            break;
        }
      }
      return { ...next, metrics, evals, run };
    }),
  setSettings: (settings) => set({ settings, settingsErrors: [] }),
  newRun: (settings) =>
    set({
      ...noIterationViews,
      run: freshRun(settings),
      metrics: [],
      evals: [],
      started: 0,
      done: 0,
    }),
  continueRun: (stored, at) => {
    const metrics = stored.metrics.filter((m) => m.iteration <= at);
    const evals = stored.evals.filter((e) => e.iteration <= at);
    set({
      ...noIterationViews,
      settings: stored.settings,
      settingsErrors: [],
      run: { ...stored, metrics, evals },
      metrics,
      evals,
      started: at,
      done: at,
    });
  },
  select: (p) => set(p),
  setOverlay: (overlay) => set({ overlay }),
}));
