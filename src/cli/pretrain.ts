/**
 * Behaviour cloning of the base policy on demonstrator episodes of the train split:
 *   npm run pretrain -- --seed S --out DIR                      the shipped base checkpoint's recipe (base)
 *   npm run pretrain -- --recipe NAME [--from-stage K --init CKPT_DIR] [--stages-dir DIR] --seed S --out DIR
 *   npm run pretrain -- [stage flags] --seed S --out DIR [--init CKPT_DIR]      one stage of your own
 * Stage flags: [--preset small|default|tiny] [--worlds W] [--demo-seeds N] [--epochs E] [--lr LR]
 *   [--lr-final LR] [--batch-tokens N] [--max-words N] [--minutes M] [--max-steps N]
 *   [--prev-token 0..4] [--layers N] [--world-weight W] [--copy-head] [--copy-continue]
 *   [--copy-target] [--copy-emit] [--train-only NAME[,NAME...]] [--sgd NAME[,NAME...] --sgd-lr LR]
 *   [--template-weights TEMPLATE=K,...] [--average-from STEP]
 *   [--split-quote] [--split-plural] [--flaws default|mild|name=rate,...] [--context-aware]
 *   [--episodes FILE.jsonl[,FILE...]]
 *   [--takeovers free:N,grammar:N] [--takeover-seed S] [--decoding free|grammar]
 * Run flags: [--save-every STEPS] [--backend wasm|cpu|webgpu] [--json]
 *
 * A recipe (src/cli/recipes.ts, listed below) is a chain of stages, each continuing from the one
 * before with its own flags and seed (--seed plus the stage's offset). Intermediate stages are
 * saved under --stages-dir (default checkpoints/pretrain-stages/RECIPE-seedS), the last one to
 * --out; a stage already finished with the same flags (its stage.json) is not run again, so the
 * same command resumes an interrupted run. --from-stage K --init DIR starts at stage K from the
 * checkpoint stage K-1 made (e.g. a kept one).
 *
 * Stage flags: --init continues from a checkpoint (its tokenizer and model; --preset and
 * --max-words are ignored); with --prev-token N it grows the model embeddings of the tokens up to N
 * back first, with --copy-continue the copy continuation prior, with --copy-target the copy head's
 * copied-token embedding (ModelConfig.copyTarget), with --layers N more layers (each
 * starting so that the model computes the same function, then it learns).
 * --split-quote gives a value's closing quote its own token (TokenizerSpec.splitQuote), in a new
 * vocabulary or in the --init checkpoint's.
 * --split-plural writes a relationship's plural as its singular's token and `s` (`classmates` ->
 * `classmate` `s`, TokenizerSpec.plurals), in a new vocabulary or in the --init checkpoint's: the
 * instruction's `each of my classmates` then holds the `classmate` an action writes, to copy.
 * --train-only trains only the parameters with these names or name prefixes (e.g. `copy.wc,copy.tok`
 * after --copy-target: a new term at a learning rate the rest of the model would not take).
 * --sgd trains the parameters with these names or name prefixes by plain SGD at --sgd-lr (decayed
 * with --lr) instead of AdamW: a new term whose rows must move in proportion to their gradients.
 * --template-weights imitates each named task template's episodes K times (the data mix; e.g.
 * `todo_create=4`), every other template's once.
 * --average-from STEP saves the mean of the weights after each step from STEP on (tail averaging,
 * SftOptions.averageFrom) instead of the last step's; --save-every checkpoints stay raw.
 * --world-weight W adds W x the language-modelling loss on the world's tokens (default 0).
 * --lr-final decays the learning rate linearly from --lr to it over --max-steps (with --max-steps 0
 * and --minutes M: over the M minutes).
 * --flaws sets the demonstrator's flaw rates (a preset or e.g. `giveUp=0.2,assume=0.3`).
 * --context-aware: the demonstrator forgets a password or access token once the turn that showed
 * it has left the policy's context (the context rule, over the --init checkpoint's vocabulary and
 * context length) and looks it up again, so that every one it sends is one the policy can copy.
 * --episodes adds episodes to imitate, one JSON EpisodeText a line (`npm run takeover` writes
 * them: expert takeovers of a policy's own rollouts); a malformed line stops the run before training.
 * --decoding records how the policy is meant to act in the checkpoint's meta (eval and train use
 * it when not told; default: the --init checkpoint's).
 * --copy-head gives a new model a copy (pointer) head (ModelConfig.copyHead),
 * --copy-continue also its continuation prior (ModelConfig.copyContinue), --copy-target the
 * copied-token term of its scores (ModelConfig.copyTarget).
 * --copy-emit (a model with a copy head, new or --init) makes a pointer to the closing quote of a
 * single-quoted value write the `"` that closes an action's string (ModelConfig.copyEmit, the
 * vocabulary's Tokenizer.quoteEmit pairs); no new parameters. With --epochs 0 a stage only adds it.
 * A single stage's defaults are the shipped checkpoint's (recipe base); --max-steps 0 runs
 * every epoch. Same seed and options, same checkpoint (bit for bit on the same backend);
 * --minutes stops on time, so for a reproducible run give --max-steps instead.
 * Writes DIR/manifest.json + DIR/weights.bin, DIR/sft.jsonl (the loss curve) and DIR/stage.json.
 */

import { isMainThread } from "node:worker_threads";
import { exitOnError, num, parseCli } from "./args";
import { selectCliBackend } from "./nodeGpu";
import { RUN_DEFAULTS, RUN_OPTIONS, STAGE_OPTIONS, type StageFlag } from "./pretrainStage";
import { describeRecipes, planRun, runPlan } from "./recipes";

const v = parseCli(
  import.meta.url,
  {
    ...STAGE_OPTIONS,
    ...RUN_OPTIONS,
    recipe: { type: "string" },
    "from-stage": { type: "string" },
    "stages-dir": { type: "string" },
  },
  describeRecipes,
);

async function main(): Promise<void> {
  const stageFlags: Partial<Record<StageFlag, string | boolean>> = {};
  for (const k of Object.keys(STAGE_OPTIONS) as StageFlag[])
    if (v[k] !== undefined) stageFlags[k] = v[k];
  const plan = planRun({
    ...(v.recipe !== undefined ? { recipe: v.recipe } : {}),
    ...(v["from-stage"] !== undefined ? { fromStage: num("from-stage", v["from-stage"]) } : {}),
    seed: num("seed", v.seed ?? RUN_DEFAULTS.seed),
    out: v.out ?? "public/checkpoints/base",
    ...(v.init !== undefined ? { init: v.init } : {}),
    ...(v["stages-dir"] !== undefined ? { stagesDir: v["stages-dir"] } : {}),
    stageFlags,
  });
  const backend = await selectCliBackend(v.backend ?? (RUN_DEFAULTS.backend as string));
  const log = (msg: string) => {
    if (!v.json) console.log(msg);
  };
  log(`backend ${backend.name}`);
  const summaries = await runPlan(
    plan,
    backend.name,
    log,
    v["save-every"] !== undefined ? { "save-every": v["save-every"] } : {},
  );
  if (v.json) console.log(JSON.stringify(summaries.length === 1 ? summaries[0] : summaries));
}

// Only on the main thread: the demonstration workers run this module too (in a bundle).
if (isMainThread) main().catch(exitOnError("pretrain"));
