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
 * --resume DIR continues the run in DIR from its latest iter-N or final checkpoint, with its own
 * settings (DIR/config.json), to --iterations in all (default: what it was asked for): the weights,
 * AdamW's moments, the task walk and GRPO's reference (the run's start checkpoint) are restored, so
 * it goes on exactly as if it had never stopped. Only --iterations, --save-every, --final-eval,
 * --backend and --json may be given with it.
 */

import { appendFileSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SPLITS, type Split } from "../env";
import { modelFromCheckpoint, saveCheckpoint } from "../model/checkpoint";
import { readCheckpointDir, saveCheckpointToDir } from "../model/checkpointFs";
import { formatTimeSplit } from "../model/timeSplit";
import { ALGORITHM_NAMES, ALGORITHMS } from "../rl/algorithms";
import { type EvalResult, evaluatePolicy } from "../rl/evaluate";
import { Trainer, type TrainerOptions } from "../rl/trainer";
import { saveTrainerStateToDir } from "../rl/trainerStateFs";
import { chosenDecoding, commaList, exitOnError, num, parseCli } from "./args";
import { selectCliBackend } from "./nodeGpu";
import { linesUpTo, resumable } from "./runDir";

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
    resume: { type: "string" },
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

/** Whether a flag was given on the command line (not just defaulted). */
const given = (name: string) =>
  process.argv.slice(2).some((a) => a === `--${name}` || a.startsWith(`--${name}=`));

const RESUME_FLAGS = ["resume", "iterations", "save-every", "final-eval", "backend", "json"];

async function main(): Promise<void> {
  const resume = v.resume
    ? await (async () => {
        const extra = Object.keys(v).filter((k) => given(k) && !RESUME_FLAGS.includes(k));
        if (extra.length > 0)
          throw new Error(
            `--resume continues a run with its own settings; these cannot be given with it: ${extra.map((k) => `--${k}`).join(", ")}`,
          );
        return resumable(v.resume as string);
      })()
    : null;
  if (!resume && !ALGORITHM_NAMES.includes(v.algo as string))
    throw new Error(`--algo must be one of ${ALGORITHM_NAMES.join(", ")}`);
  if (!resume && !v.out) throw new Error("--out DIR is required");
  if (v.clip !== undefined && v.clip !== "paper" && v.clip !== "code")
    throw new Error("--clip must be paper or code");
  const iterations =
    resume && !given("iterations") ? resume.run.iterations : num("iterations", v.iterations);
  const saveEvery = num("save-every", v["save-every"]);
  const log = (msg: string) => {
    if (!v.json) console.log(msg);
  };
  const finalSplits = commaList(v["final-eval"]).map((x) => {
    if (!(SPLITS as readonly string[]).includes(x))
      throw new Error(`--final-eval: '${x}' is not a split (${SPLITS.join(", ")})`);
    return x as Split;
  });
  const backend = await selectCliBackend(v.backend as string);
  const start = (resume?.run.checkpoint ?? v.checkpoint) as string;
  const parsed = await readCheckpointDir(resume?.from ?? start);
  const { model, tokenizer } = modelFromCheckpoint(parsed);
  let options: TrainerOptions;
  if (resume) {
    const { run, state, from } = resume;
    if (iterations <= state.iteration)
      throw new Error(
        `--resume: ${from} is at iteration ${state.iteration}; ask for more (--iterations N > ${state.iteration})`,
      );
    // GRPO's KL is to the policy the run started from, not to where it stopped.
    const reference =
      (run.options.overrides?.klCoef ?? 0) > 0
        ? modelFromCheckpoint(await readCheckpointDir(run.checkpoint)).model
        : undefined;
    options = { ...run.options, ...(reference ? { reference } : {}) };
  } else {
    const evalSplit = v["eval-split"] as Split;
    if (!(SPLITS as readonly string[]).includes(evalSplit))
      throw new Error(`--eval-split must be one of ${SPLITS.join(", ")}`);
    options = {
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
      grammar: chosenDecoding(v, parsed) === "grammar",
    };
  }
  const decoding = options.grammar ? "grammar" : "free";
  const trainer = new Trainer(model, tokenizer, options);
  const out = (resume ? v.resume : v.out) as string;
  const evalSplit = trainer.options.evalSplit;
  if (resume) {
    if (trainer.trainTasks.join() !== resume.run.trainTasks.join())
      throw new Error(
        "--resume: this code draws other training tasks than the run did (has the world changed?)",
      );
    await trainer.importState(resume.state);
    const files = ["metrics.jsonl", "evals.jsonl", "trajectories.jsonl"].map((f) => join(out, f));
    const kept = await Promise.all(files.map((f) => linesUpTo(f, trainer.iteration)));
    for (const [i, f] of files.entries()) await writeFile(f, kept[i] as string);
    const config = JSON.parse(await readFile(join(out, "config.json"), "utf8"));
    config.iterations = iterations;
    config.resumed = [
      ...(Array.isArray(config.resumed) ? config.resumed : []),
      {
        from: resume.from,
        iteration: trainer.iteration,
        backend: backend.name,
        at: new Date().toISOString(),
      },
    ];
    await writeFile(join(out, "config.json"), `${JSON.stringify(config, null, 2)}\n`);
    log(
      `resuming ${out} from ${resume.from} (iteration ${trainer.iteration}) to iteration ${iterations}`,
    );
  } else {
    await mkdir(out, { recursive: true });
    const config = {
      ...trainer.options,
      algorithm: trainer.algorithm,
      iterations,
      checkpoint: start,
      backend: backend.name,
      params: model.paramCount(),
      trainTasks: trainer.trainTasks,
      startedAt: new Date().toISOString(),
    };
    await writeFile(join(out, "config.json"), `${JSON.stringify(config, null, 2)}\n`);
    for (const f of ["metrics.jsonl", "evals.jsonl", "trajectories.jsonl"])
      await writeFile(join(out, f), "");
  }

  const save = async (dir: string) => {
    const { manifest, blob } = await saveCheckpoint(model, tokenizer, {
      createdAt: new Date().toISOString(),
      step: trainer.iteration,
      notes: `${trainer.algorithm.label} from ${start}, seed ${trainer.options.seed}, iteration ${trainer.iteration}`,
      decoding,
    });
    await saveCheckpointToDir(join(out, dir), manifest, blob);
    // What --resume needs besides the weights (not for best: it is a snapshot, not a place to go on from).
    if (dir !== "best") await saveTrainerStateToDir(join(out, dir), await trainer.exportState());
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
        `iter ${m.iteration}: reward ${m.meanReward.toFixed(3)} success ${(100 * m.successRate).toFixed(1)}% filtered ${(100 * m.filteredShare).toFixed(0)}% loss ${m.policyLoss.toFixed(4)} clip ${m.clipFraction.toFixed(3)} kl ${m.approxKl.toExponential(1)} entropy ${m.entropy.toFixed(2)} ${m.seconds.toFixed(0)}s (sample ${m.sampleTokensPerSecond.toFixed(0)} tok/s, train ${m.trainTokensPerSecond.toFixed(0)} tok/s)${m.time ? `; ${formatTimeSplit(m.time)}` : ""}`,
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
  let baseline: EvalResult | null = null;
  if (resume) {
    // The evaluations so far: the baseline (iteration 0) and the best dev TGC of the run.
    const lines = (await readFile(join(out, "evals.jsonl"), "utf8")).split("\n").filter(Boolean);
    for (const line of lines) {
      const e = JSON.parse(line) as EvalResult & { iteration: number };
      if (e.iteration === 0) baseline = e;
      else evals.push(e);
      best = Math.max(best, e.tgc);
    }
  } else if (evalEvery > 0) {
    baseline = await trainer.evaluate();
    best = baseline.tgc;
  }
  while (trainer.iteration < iterations) {
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
