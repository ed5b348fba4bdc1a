/**
 * Evaluates a checkpoint's policy on a split:
 *   npm run eval -- --checkpoint DIR --split <train|dev|test_normal|test_challenge>
 *                   [--samples N] [--temperature T] [--seed S] [--limit N] [--tasks ID,...] [--show N]
 *                   [--backend wasm|cpu|webgpu] [--nll N] [--pointer N]
 *                   [--decoding free|grammar | --grammar] [--json]
 * Prints TGC (with a 95% Wilson interval, `tgcInterval` in --json), SGC, mean reward, turns and
 * per-difficulty and per-template TGC (`byTemplate` in --json; greedy too with --temperature 0),
 * and how many episodes outgrew the context (`contextDrops`: the context rule dropped turns);
 * --decoding grammar (or --grammar) decodes every action under the action grammar
 * (src/agent/grammar.ts), free as free text; default: what the checkpoint's meta says (the shipped
 * base: grammar).
 * --tasks plays only these tasks of the split (e.g. the ones a `--pool` training run played), with
 * --samples rollouts each.
 * --show N also prints the first N episodes (actions, observations, failed tests).
 * --nll N instead scores the demonstrator's first N successful episodes of the split (of --tasks,
 * when given) and prints
 * the agent-token NLL by argument (does the policy copy passwords and access tokens, or guess?).
 * --pointer N (a model with a copy head) scores the same episodes and prints, per argument, where
 * the mass goes at a value's first token: the right record's value, another record's value of the
 * same field (another account's password), elsewhere, the vocabulary (src/rl/pointerChoice.ts).
 */

import { collectDemonstrations } from "../agent/demos";
import { ActionGrammar } from "../agent/grammar";
import { SPLITS, type Split } from "../env";
import { modelFromCheckpoint } from "../model/checkpoint";
import { readCheckpointDir } from "../model/checkpointFs";
import { argumentNll, valueNll } from "../rl/argumentNll";
import { evalTasks, evaluatePolicy } from "../rl/evaluate";
import { pointerChoice } from "../rl/pointerChoice";
import { chosenDecoding, commaList, exitOnError, num, parseCli } from "./args";
import { selectCliBackend } from "./nodeGpu";

const v = parseCli(import.meta.url, {
  checkpoint: { type: "string", default: "public/checkpoints/base" },
  split: { type: "string", default: "dev" },
  samples: { type: "string", default: "1" },
  temperature: { type: "string", default: "1" },
  seed: { type: "string", default: "0" },
  limit: { type: "string", default: "0" },
  tasks: { type: "string", default: "" },
  show: { type: "string", default: "0" },
  nll: { type: "string", default: "0" },
  pointer: { type: "string", default: "0" },
  "batch-size": { type: "string", default: "8" },
  backend: { type: "string", default: "wasm" },
  grammar: { type: "boolean", default: false },
  decoding: { type: "string" },
  json: { type: "boolean", default: false },
});

async function main(): Promise<void> {
  const split = v.split as Split;
  if (!(SPLITS as readonly string[]).includes(split))
    throw new Error(`--split must be one of ${SPLITS.join(", ")}`);
  const samples = num("samples", v.samples, true, 1);
  const temperature = num("temperature", v.temperature, false, 0);
  const seed = num("seed", v.seed);
  const limit = num("limit", v.limit, true, 0);
  const batchSize = num("batch-size", v["batch-size"], true, 1);
  const nll = num("nll", v.nll, true, 0);
  const pointer = num("pointer", v.pointer, true, 0);
  const show = num("show", v.show, true, 0);
  const tasks = commaList(v.tasks);
  evalTasks(split, tasks); // an unknown task id is refused before the checkpoint loads
  const chosen = (d: { taskId: string; success: boolean }) =>
    d.success && (tasks.length === 0 || tasks.includes(d.taskId));
  await selectCliBackend(v.backend as string);
  const parsed = await readCheckpointDir(v.checkpoint as string);
  const decoding = chosenDecoding(v, parsed);
  const { model, tokenizer } = modelFromCheckpoint(parsed);
  if (nll > 0) {
    const demos = collectDemonstrations(split, [seed]).filter(chosen).slice(0, nll);
    const rows = await argumentNll(model, tokenizer, demos);
    if (v.json)
      console.log(
        JSON.stringify({
          checkpoint: v.checkpoint,
          split,
          episodes: demos.length,
          rows,
          values: valueNll(rows),
        }),
      );
    else {
      console.log(`agent-token NLL of ${demos.length} demonstrator episodes (${split}), nats:`);
      console.log(
        `${"token".padEnd(28)}${"n".padStart(7)}${"mean".padStart(8)}${"total".padStart(9)}`,
      );
      for (const r of rows.slice(0, 20))
        console.log(
          `${r.key.padEnd(28)}${String(r.tokens).padStart(7)}${r.mean.toFixed(3).padStart(8)}${r.total.toFixed(0).padStart(9)}`,
        );
      console.log("whole values (first + rest + end), nats a value, and exp(-nats):");
      for (const x of valueNll(rows).slice(0, 8))
        console.log(
          `${x.arg.padEnd(28)}${String(x.values).padStart(7)}${x.nats.toFixed(2).padStart(8)}${`${(100 * Math.exp(-x.nats)).toFixed(1)}%`.padStart(9)}`,
        );
    }
    return;
  }
  if (pointer > 0) {
    const demos = collectDemonstrations(split, [seed]).filter(chosen).slice(0, pointer);
    const rows = await pointerChoice(model, tokenizer, demos);
    if (v.json)
      console.log(
        JSON.stringify({ checkpoint: v.checkpoint, split, episodes: demos.length, rows }),
      );
    else {
      console.log(
        `where the mass goes at a value's first token, ${demos.length} demonstrator episodes (${split}):`,
      );
      const pct = (x: number) => `${(100 * x).toFixed(1)}%`.padStart(10);
      console.log(
        `${"argument".padEnd(20)}${"values".padStart(7)}${"right".padStart(10)}${"other rec.".padStart(10)}${"elsewhere".padStart(10)}${"vocab".padStart(10)}`,
      );
      for (const r of rows.slice(0, 12))
        console.log(
          `${r.arg.padEnd(20)}${String(r.values).padStart(7)}${pct(r.right)}${pct(r.otherRecords)}${pct(r.elsewhere)}${pct(r.vocabulary)}`,
        );
    }
    return;
  }
  const { result, trajectories } = await evaluatePolicy(model, tokenizer, split, {
    temperature,
    seed,
    samples,
    limit,
    tasks,
    batchSize,
    ...(decoding === "grammar" ? { grammar: new ActionGrammar(tokenizer) } : {}),
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
  // Episodes that outgrew the context (the context rule dropped turns), and how many were solved.
  const dropped = trajectories.filter((t) => t.starts.some((s) => s > 0));
  const contextDrops = {
    episodes: dropped.length,
    solved: dropped.filter((t) => t.evaluation.success).length,
  };
  const summary = {
    checkpoint: v.checkpoint,
    decoding,
    ...result,
    contextDrops,
    seconds: Math.round(result.seconds),
  };
  if (v.json) console.log(JSON.stringify(summary));
  else {
    console.log(
      `${split}: ${result.tasks} tasks x ${samples} samples at temperature ${temperature} (${summary.seconds}s)`,
    );
    console.log(
      `TGC ${(100 * summary.tgc).toFixed(1)}% (95% interval ${summary.tgcInterval.map((x) => (100 * x).toFixed(1)).join("-")}%)  SGC ${(100 * summary.sgc).toFixed(1)}%  reward ${summary.reward.toFixed(3)}  turns ${summary.turns.toFixed(1)}`,
    );
    console.log(
      `TGC by difficulty: ${Object.entries(result.byDifficulty)
        .map(([d, x]) => `${d}: ${(100 * x).toFixed(1)}%`)
        .join("  ")}`,
    );
    console.log(
      `TGC by template: ${Object.entries(result.byTemplate)
        .map(([t, x]) => `${t} ${(100 * x).toFixed(0)}%`)
        .join("  ")}`,
    );
    const b = result.behaviour;
    console.log(
      `behaviour: doc lookups/rollout ${b.docLookupsPerRollout.toFixed(2)}  assumptions/rollout ${b.assumptionsPerRollout.toFixed(2)}  give-up rate ${b.giveUpRate.toFixed(2)}  errors/turn ${b.errorsPerTurn.toFixed(2)}  malformed/turn ${b.malformedPerTurn.toFixed(2)}`,
    );
    console.log(
      `context: ${contextDrops.episodes} of ${trajectories.length} episodes outgrew it (the rule dropped turns), ${contextDrops.solved} of them solved`,
    );
  }
  model.dispose();
}

main().catch(exitOnError("eval"));
