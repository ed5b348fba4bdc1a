/**
 * Trains a policy with LOOP (or a baseline) from a checkpoint, headless:
 *   npm run train -- --algo <name> --iterations N --seed S [--tasks T --k K --lr LR --eval-every E]
 *                    --checkpoint PATH --out DIR [--final-eval test_normal,test_challenge]
 *                    [--decoding free|grammar | --grammar] [--json]
 * --decoding grammar (or --grammar) trains a grammar-constrained policy (sampled and scored under
 * the action grammar); default: what the checkpoint's meta says (the shipped base: grammar). The
 * checkpoints it writes say the same.
 * --pool N: train on only N train tasks (a seeded choice); with --pool equal to --tasks every
 * iteration plays the same tasks, and their reward shows the policy learning them.
 * --micro-tokens N (default 2048, one full-context row): padded tokens per micro-batch (gradients
 * are summed over a minibatch's micro-batches); raise it only where memory allows (not on wasm,
 * whose 4 GB heap ran out at 4096).
 * Writes DIR/config.json, DIR/metrics.jsonl (one line per iteration), DIR/evals.jsonl,
 * DIR/trajectories.jsonl (a sample: the first group of every iteration), and checkpoints in
 * DIR/final, DIR/best (best dev TGC) and DIR/iter-N (--save-every). Same seed, same run.
 */

import { appendFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SPLITS, type Split } from "../env";
import { modelFromCheckpoint, saveCheckpoint } from "../model/checkpoint";
import { readCheckpointDir, saveCheckpointToDir } from "../model/checkpointFs";
import { ALGORITHM_NAMES, ALGORITHMS } from "../rl/algorithms";
import { type EvalResult, evaluatePolicy } from "../rl/evaluate";
import { Trainer } from "../rl/trainer";
import { chosenDecoding, exitOnError, num, parseCli } from "./args";
import { selectCliBackend } from "./nodeGpu";

const v = parseCli(
  import.meta.url,
  {
    algo: { type: "string", default: "loop" },
    iterations: { type: "string", default: "10" },
    seed: { type: "string", default: "0" },
    tasks: { type: "string", default: "40" },
    pool: { type: "string", default: "0" },
    k: { type: "string", default: "6" },
    lr: { type: "string", default: "0.0003" },
    eps: { type: "string" },
    clip: { type: "string" },
    epochs: { type: "string" },
    minibatch: { type: "string" },
    "kl-coef": { type: "string" },
    temperature: { type: "string", default: "1" },
    "eval-every": { type: "string", default: "5" },
    "eval-split": { type: "string", default: "dev" },
    "eval-limit": { type: "string", default: "0" },
    "eval-temperature": { type: "string", default: "0" },
    "max-turns": { type: "string", default: "0" },
    "micro-tokens": { type: "string", default: "2048" },
    "save-every": { type: "string", default: "0" },
    "final-eval": { type: "string", default: "" },
    checkpoint: { type: "string", default: "public/checkpoints/base" },
    out: { type: "string" },
    backend: { type: "string", default: "wasm" },
    grammar: { type: "boolean", default: false },
    decoding: { type: "string" },
    json: { type: "boolean", default: false },
  },
  () =>
    `algorithms:\n${Object.values(ALGORITHMS)
      .map((a) => `  ${a.name.padEnd(17)} ${a.summary}`)
      .join("\n")}`,
);

const optional = (name: string, value: string | undefined, integer = true) =>
  value === undefined ? undefined : num(name, value, integer);

async function main(): Promise<void> {
  if (!ALGORITHM_NAMES.includes(v.algo as string))
    throw new Error(`--algo must be one of ${ALGORITHM_NAMES.join(", ")}`);
  if (!v.out) throw new Error("--out DIR is required");
  const evalSplit = v["eval-split"] as Split;
  if (!(SPLITS as readonly string[]).includes(evalSplit))
    throw new Error(`--eval-split must be one of ${SPLITS.join(", ")}`);
  if (v.clip !== undefined && v.clip !== "paper" && v.clip !== "code")
    throw new Error("--clip must be paper or code");
  const iterations = num("iterations", v.iterations);
  const saveEvery = num("save-every", v["save-every"]);
  const log = (msg: string) => {
    if (!v.json) console.log(msg);
  };
  const finalSplits = (v["final-eval"] as string)
    .split(",")
    .filter(Boolean)
    .map((x) => {
      if (!(SPLITS as readonly string[]).includes(x))
        throw new Error(`--final-eval: '${x}' is not a split (${SPLITS.join(", ")})`);
      return x as Split;
    });
  const backend = await selectCliBackend(v.backend as string);
  const parsed = await readCheckpointDir(v.checkpoint as string);
  const decoding = chosenDecoding(v, parsed);
  const { model, tokenizer } = modelFromCheckpoint(parsed);
  const trainer = new Trainer(model, tokenizer, {
    algo: v.algo as string,
    overrides: {
      eps: optional("eps", v.eps, false),
      clip: v.clip as "paper" | "code" | undefined,
      epochs: optional("epochs", v.epochs),
      minibatch: optional("minibatch", v.minibatch),
      klCoef: optional("kl-coef", v["kl-coef"], false),
    },
    seed: num("seed", v.seed),
    tasks: num("tasks", v.tasks),
    pool: num("pool", v.pool, true, 0),
    k: num("k", v.k),
    lr: num("lr", v.lr, false),
    temperature: num("temperature", v.temperature, false),
    evalEvery: num("eval-every", v["eval-every"]),
    evalSplit,
    evalLimit: num("eval-limit", v["eval-limit"]),
    evalTemperature: num("eval-temperature", v["eval-temperature"], false),
    maxTurns: num("max-turns", v["max-turns"]),
    microTokens: num("micro-tokens", v["micro-tokens"], true, 1),
    grammar: decoding === "grammar",
  });
  const out = v.out;
  await mkdir(out, { recursive: true });
  const config = {
    ...trainer.options,
    algorithm: trainer.algorithm,
    iterations,
    checkpoint: v.checkpoint,
    backend: backend.name,
    params: model.paramCount(),
    trainTasks: trainer.trainTasks,
    startedAt: new Date().toISOString(),
  };
  await writeFile(join(out, "config.json"), `${JSON.stringify(config, null, 2)}\n`);
  for (const f of ["metrics.jsonl", "evals.jsonl", "trajectories.jsonl"])
    await writeFile(join(out, f), "");

  const save = async (dir: string) => {
    const { manifest, blob } = await saveCheckpoint(model, tokenizer, {
      createdAt: new Date().toISOString(),
      step: trainer.iteration,
      notes: `${trainer.algorithm.label} from ${v.checkpoint}, seed ${v.seed}, iteration ${trainer.iteration}`,
      decoding,
    });
    await saveCheckpointToDir(join(out, dir), manifest, blob);
    trainer.checkpointSaved(join(out, dir));
  };

  const evals: EvalResult[] = [];
  let best = -1;
  let lastProgress = 0;
  trainer.on((e) => {
    if (e.type === "rollout-progress") {
      // A line a minute while rollouts run (they take minutes on a CPU).
      if (e.finished === e.total || e.seconds - lastProgress < 60) return;
      lastProgress = e.seconds;
      log(
        `iter ${e.iteration}: rollouts ${e.finished}/${e.total} finished, ${e.tokens} tokens (${(e.tokens / e.seconds).toFixed(0)} tok/s)`,
      );
    } else if (e.type === "rollouts") {
      lastProgress = 0;
      const r = e.trajectories.map((t) => t.evaluation.reward);
      log(
        `iter ${e.iteration}: ${r.length} rollouts, reward ${(r.reduce((a, x) => a + x, 0) / Math.max(r.length, 1)).toFixed(3)}; training`,
      );
      const g = e.groups[0];
      if (g)
        appendFileSync(
          join(out, "trajectories.jsonl"),
          `${g.members
            .map((m, j) => {
              const t = e.trajectories[m];
              return JSON.stringify({
                iteration: e.iteration,
                taskId: t?.taskId,
                reward: g.rewards[j],
                advantage: g.advantages[j],
                kept: g.kept[j],
                actions: t?.actions,
                observations: t?.observations,
                tests: t?.evaluation.tests,
              });
            })
            .join("\n")}\n`,
        );
    } else if (e.type === "iteration") {
      const m = e.metrics;
      appendFileSync(join(out, "metrics.jsonl"), `${JSON.stringify(m)}\n`);
      log(
        `iter ${m.iteration}: reward ${m.meanReward.toFixed(3)} success ${(100 * m.successRate).toFixed(1)}% filtered ${(100 * m.filteredShare).toFixed(0)}% loss ${m.policyLoss.toFixed(4)} clip ${m.clipFraction.toFixed(3)} kl ${m.approxKl.toExponential(1)} entropy ${m.entropy.toFixed(2)} ${m.seconds.toFixed(0)}s (sample ${m.sampleTokensPerSecond.toFixed(0)} tok/s, train ${m.trainTokensPerSecond.toFixed(0)} tok/s)`,
      );
    } else if (e.type === "eval") {
      evals.push(e.result);
      appendFileSync(
        join(out, "evals.jsonl"),
        `${JSON.stringify({ iteration: e.iteration, ...e.result })}\n`,
      );
      log(
        `eval ${e.result.split} @${e.iteration}: TGC ${(100 * e.result.tgc).toFixed(1)}% SGC ${(100 * e.result.sgc).toFixed(1)}% reward ${e.result.reward.toFixed(3)}`,
      );
    } else if (e.type === "warning") log(`warning (iteration ${e.iteration}): ${e.message}`);
  });

  const evalEvery = trainer.options.evalEvery;
  const baseline = evalEvery > 0 ? await trainer.evaluate() : null;
  if (baseline) best = baseline.tgc;
  for (let i = 0; i < iterations; i++) {
    await trainer.iterate();
    const last = evals.at(-1);
    if (evalEvery > 0 && trainer.iteration % evalEvery === 0 && last && last.tgc > best) {
      best = last.tgc;
      await save("best");
    }
    if (saveEvery > 0 && trainer.iteration % saveEvery === 0)
      await save(`iter-${trainer.iteration}`);
  }
  const final =
    evalEvery > 0 && trainer.iteration % evalEvery !== 0 ? await trainer.evaluate() : evals.at(-1);
  if (final && final.tgc > best) {
    best = final.tgc;
    await save("best");
  }
  await save("final");
  // The final weights on more splits (greedy, every task), e.g. --final-eval test_normal,test_challenge.
  const finalEvals: Record<string, { tgc: number; sgc: number; reward: number; tasks: number }> =
    {};
  for (const split of finalSplits) {
    const { result } = await evaluatePolicy(model, tokenizer, split, {
      temperature: trainer.options.evalTemperature,
      seed: 0,
      batchSize: trainer.options.rolloutBatch,
      ...(trainer.options.maxTurns ? { maxTurns: trainer.options.maxTurns } : {}),
      ...(trainer.actionGrammar ? { grammar: trainer.actionGrammar } : {}),
    });
    appendFileSync(
      join(out, "evals.jsonl"),
      `${JSON.stringify({ iteration: trainer.iteration, final: true, ...result })}\n`,
    );
    finalEvals[split] = {
      tgc: result.tgc,
      sgc: result.sgc,
      reward: result.reward,
      tasks: result.tasks,
    };
    log(
      `final ${split}: TGC ${(100 * result.tgc).toFixed(1)}% SGC ${(100 * result.sgc).toFixed(1)}% reward ${result.reward.toFixed(3)}`,
    );
  }
  const summary = {
    algo: trainer.algorithm.name,
    iterations: trainer.iteration,
    seed: trainer.options.seed,
    eval_split: evalSplit,
    baseline_dev_tgc: baseline?.tgc ?? null,
    final_dev_tgc: final?.tgc ?? null,
    best_dev_tgc: evalEvery > 0 ? best : null,
    baseline_dev_sgc: baseline?.sgc ?? null,
    final_dev_sgc: final?.sgc ?? null,
    baseline_dev_reward: baseline?.reward ?? null,
    final_dev_reward: final?.reward ?? null,
    final_eval: finalEvals,
    out,
  };
  await writeFile(join(out, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  if (v.json) console.log(JSON.stringify(summary));
  else log(`done: ${JSON.stringify(summary)}`);
  trainer.dispose();
  model.dispose();
}

main().catch(exitOnError("train"));
