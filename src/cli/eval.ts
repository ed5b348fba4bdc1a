/**
 * Evaluates a checkpoint's policy on a split:
 *   npm run eval -- --checkpoint DIR --split <train|dev|test_normal|test_challenge>
 *                   [--samples N] [--temperature T] [--seed S] [--limit N] [--backend wasm|cpu] [--json]
 * Prints TGC, SGC, mean reward, turns and per-difficulty TGC (greedy too with --temperature 0).
 */
import { parseArgs } from "node:util";
import { rollout } from "../agent/modelRollout";
import { listTasks, SPLITS, type Split, scenarioGoalCompletion, taskGoalCompletion } from "../env";
import { type BackendName, selectBackend } from "../model/backend";
import { modelFromCheckpoint } from "../model/checkpoint";
import { readCheckpointDir } from "../model/checkpointFs";

const { values: v } = parseArgs({
  options: {
    checkpoint: { type: "string", default: "public/checkpoints/base" },
    split: { type: "string", default: "dev" },
    samples: { type: "string", default: "1" },
    temperature: { type: "string", default: "1" },
    seed: { type: "string", default: "0" },
    limit: { type: "string", default: "0" },
    "batch-size": { type: "string", default: "8" },
    backend: { type: "string", default: "wasm" },
    json: { type: "boolean", default: false },
  },
});

async function main(): Promise<void> {
  const split = v.split as Split;
  if (!(SPLITS as readonly string[]).includes(split))
    throw new Error(`--split must be one of ${SPLITS.join(", ")}`);
  const samples = Number(v.samples);
  const temperature = Number(v.temperature);
  const seed = Number(v.seed);
  const limit = Number(v.limit);
  if (!Number.isInteger(samples) || samples < 1)
    throw new Error("--samples must be a positive integer");
  if (!(temperature >= 0)) throw new Error("--temperature must be 0 or more");
  await selectBackend({ force: v.backend as BackendName });
  const { model, tokenizer } = modelFromCheckpoint(await readCheckpointDir(v.checkpoint as string));
  const tasks = listTasks(split).slice(0, limit > 0 ? limit : undefined);
  const ids = tasks.flatMap((t) => Array.from({ length: samples }, () => t.id));
  const t0 = performance.now();
  const trajs = await rollout(model, tokenizer, ids, {
    temperature,
    seed,
    mode: "eval",
    batchSize: Number(v["batch-size"]),
  });
  const seconds = (performance.now() - t0) / 1000;
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const results = trajs.map((t) => ({
    taskId: t.taskId,
    scenarioId: byId.get(t.taskId)?.scenarioId ?? t.taskId,
    difficulty: byId.get(t.taskId)?.difficulty ?? 0,
    success: t.evaluation.success,
    reward: t.evaluation.reward,
    turns: t.turns.length,
  }));
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const byDifficulty: Record<string, number> = {};
  for (const d of [1, 2, 3]) {
    const rs = results.filter((r) => r.difficulty === d);
    if (rs.length) byDifficulty[d] = taskGoalCompletion(rs);
  }
  const summary = {
    checkpoint: v.checkpoint,
    split,
    temperature,
    samples,
    tasks: tasks.length,
    tgc: taskGoalCompletion(results),
    sgc: scenarioGoalCompletion(results),
    reward: mean(results.map((r) => r.reward)),
    turns: mean(results.map((r) => r.turns)),
    byDifficulty,
    seconds: Math.round(seconds),
  };
  if (v.json) console.log(JSON.stringify(summary));
  else {
    console.log(
      `${split}: ${tasks.length} tasks x ${samples} samples at temperature ${temperature} (${summary.seconds}s)`,
    );
    console.log(
      `TGC ${(100 * summary.tgc).toFixed(1)}%  SGC ${(100 * summary.sgc).toFixed(1)}%  reward ${summary.reward.toFixed(3)}  turns ${summary.turns.toFixed(1)}`,
    );
    console.log(
      `TGC by difficulty: ${Object.entries(byDifficulty)
        .map(([d, x]) => `${d}: ${(100 * x).toFixed(1)}%`)
        .join("  ")}`,
    );
  }
  model.dispose();
}

main().catch((e: Error) => {
  console.error(`eval: ${e.message}`);
  process.exit(2);
});
