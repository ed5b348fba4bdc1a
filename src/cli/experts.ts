/**
 * Runs the expert (or the demonstrator) over a split:
 *   npm run experts -- --split <train|dev|test_normal|test_challenge|all> [--policy expert|demonstrator]
 *                      [--seed S] [--flaws default|mild|name=rate,...] [--json]
 * Exit status 0 only if every task was solved.
 */
import { createDemonstrator, parseFlaws } from "../agent/demonstrator";
import { createExpert } from "../agent/expert";
import { runEpisode } from "../agent/run";
import { createEpisode, SPLITS, type Split, tasksOf } from "../env";
import { parseCli } from "./args";

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

const values = parseCli(import.meta.url, {
  split: { type: "string", default: "all" },
  policy: { type: "string", default: "expert" },
  seed: { type: "string", default: "0" },
  flaws: { type: "string", default: "default" },
  json: { type: "boolean", default: false },
});
const splitArg = values.split as string;
if (splitArg !== "all" && !(SPLITS as readonly string[]).includes(splitArg))
  fail(`Unknown split '${splitArg}'. Use one of: ${SPLITS.join(", ")}, all.`);
const policyName = values.policy as string;
if (policyName !== "expert" && policyName !== "demonstrator")
  fail(`Unknown policy '${policyName}'. Use expert or demonstrator.`);
const seed = Number(values.seed);
if (!Number.isInteger(seed)) fail(`--seed must be an integer, got '${values.seed}'.`);
let flaws: ReturnType<typeof parseFlaws>;
try {
  flaws = parseFlaws(values.flaws as string);
} catch (e) {
  fail(`--flaws: ${(e as Error).message}`);
}

const splits: Split[] = splitArg === "all" ? [...SPLITS] : [splitArg as Split];
const episodes: {
  taskId: string;
  split: Split;
  actions: string[];
  reward: number;
  success: boolean;
}[] = [];
const stats = { obsChars: [] as number[], episodeChars: [] as number[] };
for (const split of splits)
  for (const task of tasksOf(split)) {
    const ep = createEpisode(task.id, { mode: "eval" });
    const policy =
      policyName === "expert" ? createExpert(task) : createDemonstrator(task, seed, flaws);
    const run = runEpisode(ep, policy);
    episodes.push({
      taskId: task.id,
      split,
      actions: run.actions,
      reward: run.evaluation.reward,
      success: run.evaluation.success,
    });
    stats.obsChars.push(...run.observations.map((o) => o.length));
    stats.episodeChars.push(
      ep.prompt.length +
        run.actions.reduce((s, a) => s + a.length, 0) +
        run.observations.reduce((s, o) => s + o.length, 0),
    );
  }

const solved = episodes.filter((e) => e.success).length;
if (values.json) {
  process.stdout.write(
    `${JSON.stringify({ tasks: episodes.length, solved, episodes: episodes.map(({ split: _s, ...e }) => e) })}\n`,
  );
} else {
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const max = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), 0);
  console.log(
    `policy: ${policyName}${policyName === "demonstrator" ? ` (seed ${seed}, flaws ${values.flaws})` : ""}`,
  );
  console.log("split            tasks  solved   rate  turns(mean/max)");
  for (const split of splits) {
    const eps = episodes.filter((e) => e.split === split);
    const ok = eps.filter((e) => e.success).length;
    const turns = eps.map((e) => e.actions.length);
    console.log(
      `${split.padEnd(16)} ${String(eps.length).padStart(5)} ${String(ok).padStart(7)} ${((100 * ok) / Math.max(1, eps.length)).toFixed(1).padStart(5)}%  ${mean(turns).toFixed(1)}/${max(turns)}`,
    );
  }
  console.log(
    `observation chars: mean ${mean(stats.obsChars).toFixed(0)}, max ${max(stats.obsChars)}; episode chars: mean ${mean(stats.episodeChars).toFixed(0)}, max ${max(stats.episodeChars)}`,
  );
  for (const e of episodes.filter((x) => !x.success).slice(0, 10))
    console.log(`unsolved: ${e.taskId}`);
}
process.exit(solved === episodes.length ? 0 : 1);
