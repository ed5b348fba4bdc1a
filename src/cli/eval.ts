/**
 * Evaluates a checkpoint's policy on a split:
 *   npm run eval -- --checkpoint DIR --split <train|dev|test_normal|test_challenge>
 *                   [--samples N] [--temperature T] [--seed S] [--limit N] [--show N]
 *                   [--backend wasm|cpu] [--json]
 * Prints TGC, SGC, mean reward, turns and per-difficulty TGC (greedy too with --temperature 0);
 * --show N also prints the first N episodes (actions, observations, failed tests).
 */
import { parseArgs } from "node:util";
import { SPLITS, type Split } from "../env";
import { type BackendName, selectBackend } from "../model/backend";
import { modelFromCheckpoint } from "../model/checkpoint";
import { readCheckpointDir } from "../model/checkpointFs";
import { evaluatePolicy } from "../rl/evaluate";

const { values: v } = parseArgs({
  options: {
    checkpoint: { type: "string", default: "public/checkpoints/base" },
    split: { type: "string", default: "dev" },
    samples: { type: "string", default: "1" },
    temperature: { type: "string", default: "1" },
    seed: { type: "string", default: "0" },
    limit: { type: "string", default: "0" },
    show: { type: "string", default: "0" },
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
  const show = Number(v.show);
  if (!Number.isInteger(show) || show < 0)
    throw new Error("--show must be 0 or a positive integer");
  const { result, trajectories } = await evaluatePolicy(model, tokenizer, split, {
    temperature,
    seed,
    samples,
    limit,
    batchSize: Number(v["batch-size"]),
  });
  for (const t of trajectories.slice(0, v.json ? 0 : show)) {
    const cut = (x: string) => (x.length > 300 ? `${x.slice(0, 300)}…` : x);
    console.log(`\n## ${t.taskId}: reward ${t.evaluation.reward.toFixed(2)}`);
    t.actions.forEach((a, i) => {
      console.log(`> ${a}`);
      console.log(`  ${cut(t.observations[i] ?? "").replace(/\n/g, "\n  ")}`);
    });
    for (const x of t.evaluation.tests.filter((x) => !x.passed))
      console.log(`  ✗ ${x.name}${x.message ? `: ${x.message}` : ""}`);
  }
  const summary = { checkpoint: v.checkpoint, ...result, seconds: Math.round(result.seconds) };
  if (v.json) console.log(JSON.stringify(summary));
  else {
    console.log(
      `${split}: ${result.tasks} tasks x ${samples} samples at temperature ${temperature} (${summary.seconds}s)`,
    );
    console.log(
      `TGC ${(100 * summary.tgc).toFixed(1)}%  SGC ${(100 * summary.sgc).toFixed(1)}%  reward ${summary.reward.toFixed(3)}  turns ${summary.turns.toFixed(1)}`,
    );
    console.log(
      `TGC by difficulty: ${Object.entries(result.byDifficulty)
        .map(([d, x]) => `${d}: ${(100 * x).toFixed(1)}%`)
        .join("  ")}`,
    );
    const b = result.behaviour;
    console.log(
      `behaviour: doc lookups/rollout ${b.docLookupsPerRollout.toFixed(2)}  assumptions/rollout ${b.assumptionsPerRollout.toFixed(2)}  give-up rate ${b.giveUpRate.toFixed(2)}  errors/turn ${b.errorsPerTurn.toFixed(2)}`,
    );
  }
  model.dispose();
}

main().catch((e: Error) => {
  console.error(`eval: ${e.message}`);
  process.exit(2);
});
