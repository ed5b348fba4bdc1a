/**
 * Pretraining recipes: a recipe is a chain of behaviour-cloning stages, each continuing from the
 * one before (`--init`), with its own flags and seed. `npm run pretrain -- --seed S --out DIR`
 * runs the shipped base checkpoint's recipe; every stage is reproducible on its own from the
 * checkpoint before it (`--from-stage K --init DIR`), and a finished stage is not run again.
 */

import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseStageFlags, runStage, type StageFlag, type StageSummary } from "./pretrainStage";

export interface Stage {
  /** Short name (the stage's folder). */
  name: string;
  /** Added to the run's --seed (its demonstrations and batch order). */
  seed: number;
  /** The stage's flags, as typed on the command line (STAGE_OPTIONS only). */
  args: string;
  /** Why the stage is there. */
  about: string;
}

export interface Recipe {
  about: string;
  stages: readonly Stage[];
}

/** The copy-head imitator of the mild demonstrator: seven stages (docs/model.md). */
const COPY_CHAIN: readonly Stage[] = [
  {
    name: "copy-head",
    seed: 0,
    args: "--copy-head --max-steps 600",
    about: "preset small with the copy (pointer) head, default demonstrations, lr 3e-3",
  },
  {
    name: "prev2",
    seed: 0,
    args: "--prev-token 2 --max-steps 150",
    about: "keys see the token two back",
  },
  {
    name: "mild-cont-decay",
    seed: 0,
    args: "--flaws mild --copy-continue --lr-final 0.0003 --max-steps 400",
    about: "milder demonstrations with slips, the copy continuation prior, lr decay",
  },
  {
    name: "split-quote",
    seed: 0,
    args: "--split-quote --flaws mild --lr 0.002 --lr-final 0.0002 --max-steps 300",
    about: "a value's closing quote its own token",
  },
  {
    name: "prev4-big-batch",
    seed: 1,
    args: "--prev-token 4 --demo-seeds 4 --batch-tokens 16384 --flaws mild --lr 0.002 --lr-final 0.0001 --max-steps 307",
    about:
      "keys see the account name four back; 4 demonstrator seeds, 16k-token batches (6 min on an H200)",
  },
  {
    name: "seed2",
    seed: 2,
    args: "--demo-seeds 2 --flaws mild --lr 0.001 --lr-final 0.0004 --max-steps 300",
    about: "fresh demonstrations",
  },
  {
    name: "seed3",
    seed: 3,
    args: "--demo-seeds 2 --flaws mild --lr 0.0008 --lr-final 0.0001 --max-steps 520",
    about: "fresh demonstrations, lr decayed to 1e-4",
  },
];

/** On the copy chain: one round of expert takeovers, then the expert's own demonstrations. */
const AGENT_STAGES: readonly Stage[] = [
  {
    name: "takeover",
    seed: 4,
    args: "--worlds 4 --demo-seeds 1 --flaws mild --takeovers free:96,grammar:96 --lr 0.0006 --lr-final 0.0001 --max-steps 240",
    about:
      "DAgger round: the expert finishes 192 of the policy's own rollouts from their first error (and one random turn)",
  },
  {
    name: "expert",
    seed: 6,
    args: "--worlds 12 --demo-seeds 1 --flaws none,slip=0.1 --lr 0.0006 --lr-final 0.0001 --max-steps 200 --decoding grammar",
    about:
      "the expert's demonstrations (no flaws; one call in ten slips first, not imitated): a deterministic target",
  },
  {
    name: "expert2",
    seed: 7,
    args: "--worlds 12 --demo-seeds 1 --flaws none,slip=0.1 --lr 0.0005 --lr-final 0.00005 --max-steps 300",
    about: "the same on fresh worlds, lr decayed to 5e-5",
  },
  {
    name: "aware",
    seed: 11,
    args: "--worlds 12 --demo-seeds 1 --flaws none,slip=0.1 --context-aware --lr 0.0003 --lr-final 0.00003 --max-steps 200",
    about:
      "the expert forgets a password or access token once it has left the policy's context, and looks it up again",
  },
  {
    name: "mix",
    seed: 21,
    args: "--worlds 12 --demo-seeds 1 --flaws none,slip=0.1 --context-aware --copy-target --template-weights todo_create=4,notes_append=4 --lr 3e-4 --lr-final 1e-4 --max-steps 300",
    about:
      "the copied-token term (where a copied value ends), the two templates that end single-quoted copies imitated 4x",
  },
  {
    name: "quotes",
    seed: 22,
    args: "--worlds 0 --demo-seeds 1 --flaws none,slip=0.1 --copy-emit --epochs 0 --max-steps 1",
    about:
      "no training (--epochs 0): a pointer to a single-quoted value's closing quote writes the action's closing \" (ModelConfig.copyEmit)",
  },
  {
    name: "plurals",
    seed: 23,
    args: "--worlds 12 --demo-seeds 1 --flaws none,slip=0.1 --context-aware --split-plural --template-weights pay_request_relationship=4,files_create_list=4 --lr 3e-4 --lr-final 1e-4 --max-steps 200",
    about:
      "a relationship's plural written as its singular + s (TokenizerSpec.plurals), so the pointer copies the relationship an action writes; the two templates that name one imitated 4x",
  },
];

export const RECIPES: Readonly<Record<string, Recipe>> = {
  base: {
    about:
      "the shipped base checkpoint (public/checkpoints/base): the copy chain, a takeover round, then the expert's demonstrations (the forgetting expert, the copied-token term and a data mix), then the quote map of the copy head and the relationships' plurals as singular + s; ~20M tokens of SFT in thirteen stages and one that only adds the map (about 15 hours on wasm here; stage 4 was run on an H200)",
    stages: [...COPY_CHAIN, ...AGENT_STAGES],
  },
  "copy-chain": {
    about:
      "the copy-head policy of the kept experiments (checkpoints/experiments/, docs/model.md): copy head, previous-token embeddings up to 4 back, mild demonstrations with slips, split quotes; ~14M tokens of SFT in seven stages (about 9 hours on wasm here; stage 4 was run on an H200)",
    stages: COPY_CHAIN,
  },
  small: {
    about:
      "the base checkpoint shipped before 2026-12-05: preset small, default demonstrations, no copy head, 804 steps (80 minutes on wasm here); dev TGC 0%",
    stages: [{ name: "small", seed: 0, args: "--max-steps 804", about: "one stage" }],
  },
};

/** What the run was given (run-level options; stage flags only for a single custom stage). */
export interface RunRequest {
  recipe?: string;
  fromStage?: number;
  seed: number;
  out: string;
  init?: string;
  stagesDir?: string;
  /** The stage flags given on the command line, by name. */
  stageFlags: Partial<Record<StageFlag, string | boolean>>;
}

export interface PlannedStage {
  index: number;
  name: string;
  /** Stage and run values for runStage (seed, out, init set). */
  values: Record<string, string | boolean>;
  /** True for the stage that writes the run's --out. */
  last: boolean;
}

/**
 * The stages a run executes. With stage flags and no --recipe: one custom stage (the flags over
 * the single-stage defaults). Otherwise the named recipe (default `base`) from --from-stage on,
 * each stage's output the next one's --init; intermediate stages go to `stagesDir` (default
 * checkpoints/pretrain-stages/<recipe>-seed<S>), the last to --out.
 */
export function planRun(
  req: RunRequest,
  recipes: Readonly<Record<string, Recipe>> = RECIPES,
): PlannedStage[] {
  const given = Object.keys(req.stageFlags) as StageFlag[];
  if (req.recipe === undefined && given.length > 0) {
    if (req.fromStage !== undefined)
      throw new Error("--from-stage needs a recipe, not stage flags");
    const values: Record<string, string | boolean> = { seed: String(req.seed), out: req.out };
    for (const k of given) values[k] = req.stageFlags[k] as string | boolean;
    if (req.init !== undefined) values.init = req.init;
    return [{ index: 0, name: "custom", values, last: true }];
  }
  const name = req.recipe ?? "base";
  const recipe = recipes[name];
  if (!recipe)
    throw new Error(`unknown recipe '${name}': one of ${Object.keys(recipes).join(", ")}`);
  if (given.length > 0)
    throw new Error(
      `--${given[0]} is set by the recipe's stages: leave it out, or give no --recipe to run one stage with your flags`,
    );
  const from = req.fromStage ?? 0;
  if (!Number.isInteger(from) || from < 0 || from >= recipe.stages.length)
    throw new Error(`--from-stage must be 0 to ${recipe.stages.length - 1} for recipe '${name}'`);
  if (from > 0 && req.init === undefined)
    throw new Error(`--from-stage ${from} needs --init: the checkpoint stage ${from - 1} made`);
  if (from === 0 && req.init !== undefined)
    throw new Error("a recipe's first stage starts from scratch: --init needs --from-stage K > 0");
  const stagesDir =
    req.stagesDir ?? join("checkpoints", "pretrain-stages", `${name}-seed${req.seed}`);
  const plan: PlannedStage[] = [];
  let prev = req.init;
  recipe.stages.forEach((stage, index) => {
    if (index < from) return;
    const last = index === recipe.stages.length - 1;
    const out = last ? req.out : join(stagesDir, `${index}-${stage.name}`);
    const values: Record<string, string | boolean> = {
      ...(parseStageFlags(stage.args.split(/\s+/)) as Record<string, string | boolean>),
      seed: String(req.seed + stage.seed),
      out,
    };
    if (prev !== undefined) values.init = prev;
    plan.push({ index, name: stage.name, values, last });
    prev = out;
  });
  return plan;
}

/** A stage is done when its folder's stage.json records the same values (flags, seed, init). */
async function finished(stage: PlannedStage): Promise<boolean> {
  try {
    const done = JSON.parse(await readFile(join(String(stage.values.out), "stage.json"), "utf8"));
    return JSON.stringify(done.values) === JSON.stringify(stage.values);
  } catch {
    return false;
  }
}

/**
 * Runs a plan's stages in order on the selected backend, skipping those already finished with
 * the same values; `run` adds run-level values (e.g. save-every) that do not make a stage differ.
 * Each finished stage writes stage.json (its values and summary) next to its checkpoint.
 */
export async function runPlan(
  plan: readonly PlannedStage[],
  backendName: string,
  log: (msg: string) => void,
  run: Record<string, string | boolean> = {},
): Promise<StageSummary[]> {
  const summaries: StageSummary[] = [];
  for (const stage of plan) {
    if (stage.name !== "custom")
      log(`stage ${stage.index} ${stage.name}: ${JSON.stringify(stage.values)}`);
    if (await finished(stage)) {
      log(`stage ${stage.index} ${stage.name}: already done in ${stage.values.out}`);
      continue;
    }
    const summary = await runStage({ ...stage.values, ...run }, backendName, log);
    await writeFile(
      join(String(stage.values.out), "stage.json"),
      `${JSON.stringify({ index: stage.index, name: stage.name, values: stage.values, summary }, null, 2)}\n`,
    );
    summaries.push(summary);
    log(`saved ${summary.out}: ${JSON.stringify(summary)}`);
  }
  return summaries;
}

/** The recipes and their stages, for --help. */
export function describeRecipes(): string {
  const lines = ["Recipes (--recipe NAME; `base` when no stage flag is given):"];
  for (const [name, r] of Object.entries(RECIPES)) {
    lines.push(`  ${name}: ${r.about}`);
    r.stages.forEach((s, i) => {
      lines.push(`    ${i}. ${s.name} (seed +${s.seed}): ${s.args}  — ${s.about}`);
    });
  }
  return lines.join("\n");
}
