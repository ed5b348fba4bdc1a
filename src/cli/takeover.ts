/**
 * Expert takeovers of a policy's own rollouts (DAgger-style relabelling, src/agent/takeover.ts):
 *   npm run takeover -- --checkpoint DIR --tasks N --out FILE.jsonl
 *                       [--offset O] [--seed S] [--worlds W] [--grammar] [--temperature T]
 *                       [--backend wasm|cpu|webgpu]
 * Rolls the policy out on N of the pretraining tasks (the train split plus its scenarios on W
 * fresh worlds, in a seeded order; --offset skips the first O, so that two processes can share the
 * work), then for each rollout lets the expert take over right after its first failed call and at
 * one seeded random turn. Writes the successful takeovers to FILE.jsonl (one EpisodeText a line:
 * the policy's turns are context only, `slips`) and the rollouts to FILE.rollouts.jsonl. Feed the
 * takeovers to `npm run pretrain -- --episodes FILE.jsonl ...`.
 */

import { appendFile, writeFile } from "node:fs/promises";
import { ActionGrammar } from "../agent/grammar";
import { rollout } from "../agent/modelRollout";
import { takeover, takeoverPoints } from "../agent/takeover";
import { Rng } from "../env/rng";
import { modelFromCheckpoint } from "../model/checkpoint";
import { readCheckpointDir } from "../model/checkpointFs";
import { parseCli } from "./args";
import { pretrainTasks } from "./demoWorkers";
import { selectCliBackend } from "./nodeGpu";
import { num } from "./pretrainStage";

const v = parseCli(import.meta.url, {
  checkpoint: { type: "string", default: "public/checkpoints/base" },
  tasks: { type: "string", default: "64" },
  offset: { type: "string", default: "0" },
  seed: { type: "string", default: "0" },
  worlds: { type: "string", default: "36" },
  temperature: { type: "string", default: "1" },
  grammar: { type: "boolean", default: false },
  backend: { type: "string", default: "wasm" },
  out: { type: "string" },
});

/** Rollouts decoded together; also how often progress is written. */
const WAVE = 16;

async function main(): Promise<void> {
  const out = v.out;
  if (!out) throw new Error("--out FILE.jsonl is required");
  const n = num("tasks", v.tasks);
  const offset = num("offset", v.offset);
  const seed = num("seed", v.seed);
  const temperature = num("temperature", v.temperature, false);
  const all = pretrainTasks(num("worlds", v.worlds)).map((t) => t.id);
  const ids = Rng.derive(seed, "takeover/tasks")
    .shuffle(all)
    .slice(offset, offset + n);
  await selectCliBackend(v.backend as string);
  const { model, tokenizer } = modelFromCheckpoint(await readCheckpointDir(v.checkpoint as string));
  const grammar = v.grammar ? new ActionGrammar(tokenizer) : undefined;
  const rolloutsFile = `${out.replace(/\.jsonl$/, "")}.rollouts.jsonl`;
  await writeFile(out, "");
  await writeFile(rolloutsFile, "");
  let rolled = 0;
  let solved = 0;
  let tried = 0;
  let kept = 0;
  const t0 = performance.now();
  for (let i = 0; i < ids.length; i += WAVE) {
    const trajectories = await rollout(model, tokenizer, ids.slice(i, i + WAVE), {
      temperature,
      seed: seed * 1_000_003 + offset + i,
      mode: "train",
      ...(grammar ? { grammar } : {}),
    });
    for (const t of trajectories) {
      rolled++;
      if (t.evaluation.success) solved++;
      const played = { taskId: t.taskId, actions: t.actions, observations: t.observations };
      await appendFile(
        rolloutsFile,
        `${JSON.stringify({ ...played, reward: t.evaluation.reward, success: t.evaluation.success })}\n`,
      );
      for (const k of takeoverPoints(played, seed)) {
        const ep = takeover(played, k);
        if (!ep) continue;
        tried++;
        if (!ep.success) continue;
        kept++;
        await appendFile(out, `${JSON.stringify(ep)}\n`);
      }
    }
    console.error(
      `${rolled}/${ids.length} rollouts (${solved} solved), ${kept}/${tried} takeovers solved, ${((performance.now() - t0) / 1000).toFixed(0)}s`,
    );
  }
  model.dispose();
  console.log(
    JSON.stringify({ rollouts: rolled, solved, takeovers: tried, kept, out, rolloutsFile }),
  );
}

main().catch((e: unknown) => {
  console.error((e as Error).message);
  process.exit(1);
});
