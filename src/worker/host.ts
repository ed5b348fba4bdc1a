/**
 * The training host that lives in the Web Worker: builds the model (shipped checkpoint or a tiny
 * one), runs the Trainer, and streams its events as plain data. No DOM here.
 */
import type { Trajectory } from "../agent/modelRollout";
import { createEpisode, findTask } from "../env";
import { describeChange, diffDb } from "../env/db";
import { type BackendInfo, type SelectOptions, selectBackend } from "../model/backend";
import {
  CheckpointError,
  type CheckpointManifest,
  loadIntoModel,
  modelFromCheckpoint,
  type ParsedCheckpoint,
  packCheckpoint,
  parseCheckpoint,
  saveCheckpoint,
  unpackCheckpoint,
} from "../model/checkpoint";
import { getCheckpoint, listCheckpoints, putCheckpoint } from "../model/checkpointStore";
import { presetConfig } from "../model/config";
import { GPT } from "../model/gpt";
import { EOA, type Tokenizer } from "../model/tokenizer";
import { Trainer, type TrainerEvent } from "../rl/trainer";
import { decodeTrainerState, encodeTrainerState } from "../rl/trainerState";
import {
  type CheckpointInfo,
  type EventListener,
  type GroupView,
  type ResumeInfo,
  type Settings,
  SPEED_DELAY,
  TINY_TURNS,
  type TrainingApi,
  type TrajectoryView,
  type WorkerEvent,
} from "./protocol";
import { getResumePoint, listResumePoints, putResumePoint } from "./resumePoints";

export interface HostOptions {
  /** Where the shipped checkpoint's manifest.json and weights.bin are served. */
  checkpointUrl: string;
  /** Passed to selectBackend (the wasm binaries' URLs in the browser). */
  wasmPaths?: SelectOptions["wasmPaths"];
  /** Passed to selectBackend: the wasm backend's threads (default: half the logical cores). */
  wasmThreads?: number;
}

/** Turns a trajectory into what the page shows (token texts, observations, tests). */
export function trajectoryView(
  t: Trajectory,
  index: number,
  tok: Tokenizer,
  extra: { advantage: number; baseline: number; kept: boolean },
): TrajectoryView {
  // Replays the actions to list the state changes after each turn (worker side: no main-thread cost).
  const changes: string[][] = [];
  try {
    const ep = createEpisode(t.taskId, { mode: "train", maxTurns: Math.max(1, t.turns.length) });
    for (const action of t.actions) {
      ep.step(action);
      changes.push(diffDb(ep.initialDb, ep.db).slice(0, 20).map(describeChange));
    }
  } catch (e) {
    changes.push([`(cannot replay: ${(e as Error).message})`]);
  }
  return {
    index,
    taskId: t.taskId,
    instruction: findTask(t.taskId)?.instruction ?? "",
    prompt: t.promptText,
    reward: t.evaluation.reward,
    success: t.evaluation.success,
    ...extra,
    turns: t.turns.map((turn, i) => ({
      action: t.actions[i] ?? "",
      tokens: turn.action.map((id, j) => ({
        text: id === EOA ? "⏎" : tok.decode([id]),
        logprob: t.logprobs[i]?.[j] ?? 0,
      })),
      observation: t.observations[i] ?? "",
      start: t.starts[i] ?? 0,
      changes: changes[i] ?? [],
    })),
    tests: t.evaluation.tests,
  };
}

export class TrainingHost implements TrainingApi {
  private listener: EventListener | null = null;
  /** Events not sent yet, each with the run it belongs to (the run id current when emitted). */
  private queue: { run: string | null; event: WorkerEvent }[] = [];
  private flushScheduled = false;
  private model: GPT | null = null;
  private tokenizer: Tokenizer | null = null;
  private trainer: Trainer | null = null;
  private settings: Settings | null = null;
  private backend: BackendInfo | null = null;
  private base: ParsedCheckpoint | null = null;
  /** The page's run this trainer belongs to (resume points are saved under it), if any. */
  private runId: string | null = null;
  /** The last iteration that finished its update (not stopped midway). */
  private lastFinished = 0;
  private running = false;
  private loop: Promise<void> | null = null;

  constructor(private readonly options: HostOptions) {}

  subscribe(listener: EventListener): void {
    this.listener = listener;
  }

  /**
   * Events go out in batches (one message per macrotask), so the page renders once per batch; a
   * batch holds one run's events (a reset's old run may still emit while it stops).
   */
  private emit(event: WorkerEvent): void {
    this.queue.push({ run: this.runId, event });
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setTimeout(() => {
      this.flushScheduled = false;
      const queued = this.queue;
      this.queue = [];
      const batches: { run: string | null; events: WorkerEvent[] }[] = [];
      for (const { run, event } of queued) {
        const last = batches.at(-1);
        if (last?.run === run) last.events.push(event);
        else batches.push({ run, events: [event] });
      }
      for (const b of batches) this.listener?.(b.events, b.run);
    }, 0);
  }

  private async baseCheckpoint(): Promise<ParsedCheckpoint> {
    if (this.base) return this.base;
    const url = this.options.checkpointUrl.replace(/\/$/, "");
    const [m, w] = await Promise.all([fetch(`${url}/manifest.json`), fetch(`${url}/weights.bin`)]);
    if (!m.ok || !w.ok) throw new Error(`cannot fetch the base checkpoint from ${url}`);
    this.base = parseCheckpoint(await m.json(), new Uint8Array(await w.arrayBuffer()));
    return this.base;
  }

  async reset(settings: Settings, runId?: string): Promise<void> {
    await this.stopLoop();
    this.runId = runId ?? null;
    this.lastFinished = 0;
    this.emit({ type: "status", phase: "loading", message: "loading the policy" });
    try {
      if (!this.backend || settings.backend !== (this.settings?.backend ?? "auto")) {
        this.backend = await selectBackend({
          ...(settings.backend === "auto" ? {} : { force: settings.backend }),
          ...(this.options.wasmPaths ? { wasmPaths: this.options.wasmPaths } : {}),
          ...(this.options.wasmThreads ? { wasmThreads: this.options.wasmThreads } : {}),
        });
      }
      this.trainer?.dispose();
      this.model?.dispose();
      const base = await this.baseCheckpoint();
      if (settings.preset === "tiny") {
        // A tiny untrained model with the shipped vocabulary and a short context: quick to run.
        this.tokenizer = base.tokenizer;
        this.model = new GPT(
          { ...presetConfig("tiny", base.tokenizer.size), context: 512 },
          settings.seed,
        );
      } else {
        const built = modelFromCheckpoint(base, settings.seed);
        this.model = built.model;
        this.tokenizer = built.tokenizer;
      }
      this.settings = settings;
      this.trainer = this.makeTrainer(settings);
      this.emit({
        type: "backend",
        info: this.backend,
        params: this.model.paramCount(),
        preset: settings.preset,
      });
      this.emit({ type: "status", phase: "ready", message: "ready" });
    } catch (e) {
      // Nothing of the stopped run is left to step or play (requireTrainer says so).
      this.trainer?.dispose();
      this.trainer = null;
      this.emit({ type: "status", phase: "error", message: (e as Error).message });
      throw e;
    }
  }

  private makeTrainer(settings: Settings): Trainer {
    const model = this.model as GPT;
    const tiny = settings.preset === "tiny";
    const trainer = new Trainer(model, this.tokenizer as Tokenizer, {
      algo: settings.algo,
      overrides: { eps: settings.eps, epochs: settings.epochs },
      seed: settings.seed,
      tasks: settings.tasks,
      pool: settings.pool,
      k: settings.k,
      lr: settings.lr,
      temperature: settings.temperature,
      evalEvery: settings.evalEvery,
      evalLimit: settings.evalLimit,
      // 0: the rollout's mode decides (40 turns to train, 50 to evaluate).
      maxTurns: settings.turns || (tiny ? TINY_TURNS : 0),
      maxActionTokens: tiny ? 16 : 0,
      rolloutBatch: 0,
      tokenStats: true,
      grammar: settings.grammar === "on",
    });
    trainer.on((e) => this.forward(e));
    return trainer;
  }

  private forward(e: TrainerEvent): void {
    const tok = this.tokenizer as Tokenizer;
    switch (e.type) {
      case "iteration-start":
      case "rollout-progress":
        this.emit(e);
        return;
      case "rollouts": {
        const groups: GroupView[] = e.groups.map((g) => ({
          taskId: g.taskId,
          rewards: g.rewards,
          baselines: g.baselines,
          advantages: g.advantages,
          kept: g.kept,
          members: g.members,
        }));
        const where = new Map<number, { g: GroupView; j: number }>();
        for (const g of groups)
          g.members.forEach((m, j) => {
            where.set(m, { g, j });
          });
        const trajectories = e.trajectories.map((t, i) => {
          const w = where.get(i);
          return trajectoryView(t, i, tok, {
            advantage: w?.g.advantages[w.j] ?? 0,
            baseline: w?.g.baselines[w.j] ?? 0,
            kept: w?.g.kept[w.j] ?? false,
          });
        });
        this.emit({ type: "rollouts", iteration: e.iteration, groups, trajectories });
        return;
      }
      case "minibatch":
        this.emit({
          type: "minibatch",
          iteration: e.iteration,
          index: e.index,
          count: e.count,
          epoch: e.epoch,
          loss: e.loss,
        });
        return;
      case "token-stats":
        this.emit(e);
        return;
      case "iteration":
        // A stopped iteration (a reset mid-update) is not a point to continue from.
        if (!e.metrics.stopped) this.lastFinished = e.metrics.iteration;
        this.emit({ type: "iteration", metrics: e.metrics });
        return;
      case "eval":
        this.emit({ type: "eval", iteration: e.iteration, result: e.result });
        return;
      case "warning":
        this.emit({ type: "warning", message: e.message });
        return;
      case "checkpoint":
        return;
    }
  }

  private requireTrainer(): Trainer {
    if (!this.trainer) throw new Error("the trainer is not ready (call reset first)");
    return this.trainer;
  }

  async play(): Promise<void> {
    const trainer = this.requireTrainer();
    trainer.resume();
    this.emit({ type: "status", phase: "running", message: "training" });
    this.startLoop(trainer);
  }

  async pause(): Promise<void> {
    this.requireTrainer().pause();
    this.emit({ type: "status", phase: "paused", message: "pausing at the next batch" });
  }

  /**
   * To the end of an iteration, then paused: the next one when paused between iterations, the
   * one in progress otherwise. Runs in the same loop as play, so that a reset stops it too and a
   * second step or a play cannot start an iteration beside it.
   */
  async step(): Promise<void> {
    const trainer = this.requireTrainer();
    trainer.pause();
    trainer.step();
    this.emit({ type: "status", phase: "running", message: "one iteration" });
    this.startLoop(trainer);
  }

  /** The one loop that runs iterations (until a reset stops it), unless it runs already. */
  private startLoop(trainer: Trainer): void {
    if (this.running) return;
    this.running = true;
    this.loop = (async () => {
      try {
        while (this.running) {
          await trainer.run(1);
          await this.saveResumePoint();
          if (!this.running) break;
          const delay = SPEED_DELAY[this.settings?.speed ?? "fast"];
          await new Promise((r) => setTimeout(r, delay));
          if (trainer.isPaused) {
            this.emit({ type: "status", phase: "paused", message: "paused" });
            // Wait here until play() or step() releases the trainer's gate inside run().
          }
        }
      } catch (e) {
        this.emit({ type: "status", phase: "error", message: (e as Error).message });
      } finally {
        this.running = false;
      }
    })();
  }

  async update(settings: Settings): Promise<void> {
    if (this.trainer && settings.lr !== this.settings?.lr) this.trainer.lr = settings.lr;
    if (this.settings) this.settings = { ...this.settings, lr: settings.lr, speed: settings.speed };
  }

  /** After a finished iteration: where this run can be continued from after a reload. */
  private async saveResumePoint(): Promise<void> {
    const trainer = this.trainer;
    if (!this.runId || !trainer || !this.model || !this.tokenizer) return;
    if (trainer.iteration === 0 || trainer.iteration !== this.lastFinished) return;
    try {
      const { manifest, blob } = await this.policyCheckpoint();
      await putResumePoint({
        runId: this.runId,
        iteration: trainer.iteration,
        savedAt: new Date().toISOString(),
        checkpoint: packCheckpoint(manifest, blob),
        state: encodeTrainerState(await trainer.exportState()),
      });
    } catch (e) {
      this.emit({
        type: "warning",
        message: `could not keep a point to continue this run from: ${(e as Error).message}`,
      });
    }
  }

  async resume(runId: string, settings: Settings): Promise<ResumeInfo> {
    await this.reset(settings, runId);
    const point = await getResumePoint(runId);
    if (!point)
      return { ok: false, iteration: 0, detail: "this run has no point to continue from" };
    try {
      // Everything is checked before anything changes: the weights, then the trainer's state.
      const { manifest, blob } = unpackCheckpoint(point.checkpoint);
      const parsed = parseCheckpoint(manifest, blob);
      const state = decodeTrainerState(point.state.manifest, point.state.blob);
      loadIntoModel(this.model as GPT, parsed, this.tokenizer as Tokenizer);
      await this.requireTrainer().importState(state);
      this.lastFinished = state.iteration;
      return { ok: true, iteration: state.iteration, detail: `iteration ${state.iteration}` };
    } catch (e) {
      // Half-loaded is not a state to train from: back to a fresh start of these settings.
      await this.reset(settings, runId);
      return { ok: false, iteration: 0, detail: (e as Error).message };
    }
  }

  async listResumePoints(): Promise<{ runId: string; iteration: number }[]> {
    return listResumePoints();
  }

  private async stopLoop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.trainer?.stop();
    await this.loop;
  }

  /**
   * The policy now as a checkpoint. Its meta says how it decodes: one trained under the grammar is
   * evaluated under it by `npm run eval` (whose default is the checkpoint's meta).
   */
  private async policyCheckpoint(): Promise<{ manifest: CheckpointManifest; blob: Uint8Array }> {
    if (!this.model || !this.tokenizer) throw new Error("no model yet");
    return saveCheckpoint(this.model, this.tokenizer, {
      createdAt: new Date().toISOString(),
      step: this.trainer?.iteration ?? 0,
      notes: `${this.settings?.algo ?? ""} iteration ${this.trainer?.iteration ?? 0}`,
      decoding: this.settings?.grammar === "on" ? "grammar" : "free",
    });
  }

  async saveCheckpoint(key: string): Promise<CheckpointInfo> {
    const { manifest, blob } = await this.policyCheckpoint();
    await putCheckpoint(key, manifest, blob);
    return { key, ok: true, detail: `iteration ${this.trainer?.iteration ?? 0}` };
  }

  async listCheckpoints(): Promise<CheckpointInfo[]> {
    return (await listCheckpoints()).map((c) =>
      c.ok
        ? { key: c.key, ok: true, detail: c.manifest.meta?.notes ?? "" }
        : { key: c.key, ok: false, detail: c.error },
    );
  }

  private load(parsed: ParsedCheckpoint, key: string): CheckpointInfo {
    if (!this.model || !this.tokenizer) throw new Error("no model yet");
    // Its rollouts' caches and old log-probs belong to the weights it started with.
    if (this.trainer?.inIteration)
      return {
        key,
        ok: false,
        detail: "an iteration is in progress: Step to its end (or Reset), then load",
      };
    // Checked in full before any weight changes: a mismatch leaves the model as it was.
    loadIntoModel(this.model, parsed, this.tokenizer);
    return { key, ok: true, detail: "loaded" };
  }

  async loadCheckpoint(key: string): Promise<CheckpointInfo> {
    try {
      const parsed = await getCheckpoint(key);
      if (!parsed) return { key, ok: false, detail: `no checkpoint named ${key}` };
      return this.load(parsed, key);
    } catch (e) {
      return { key, ok: false, detail: (e as Error).message };
    }
  }

  async exportCheckpoint(): Promise<Uint8Array> {
    const { manifest, blob } = await this.policyCheckpoint();
    return packCheckpoint(manifest, blob);
  }

  async importCheckpoint(bytes: Uint8Array): Promise<CheckpointInfo> {
    try {
      const { manifest, blob } = unpackCheckpoint(bytes);
      return this.load(parseCheckpoint(manifest, blob), "file");
    } catch (e) {
      const msg =
        e instanceof CheckpointError ? e.message : `not a checkpoint: ${(e as Error).message}`;
      return { key: "file", ok: false, detail: msg };
    }
  }
}
