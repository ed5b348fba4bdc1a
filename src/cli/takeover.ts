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
import { collectTakeovers } from "../agent/takeover";
import { modelFromCheckpoint } from "../model/checkpoint";
import { readCheckpointDir } from "../model/checkpointFs";
import { num, parseCli } from "./args";
import { pretrainTasks } from "./demoWorkers";
import { selectCliBackend } from "./nodeGpu";
import { TAKEOVER_WORLDS } from "./pretrainStage";

const v = parseCli(import.meta.url, {
  checkpoint: { type: "string", default: "public/checkpoints/base" },
  tasks: { type: "string", default: "64" },
  offset: { type: "string", default: "0" },
  seed: { type: "string", default: "0" },
  worlds: { type: "string", default: String(TAKEOVER_WORLDS) },
  temperature: { type: "string", default: "1" },
  grammar: { type: "boolean", default: false },
  backend: { type: "string", default: "wasm" },
  out: { type: "string" },
});

async function main(): Promise<void> {
  const out = v.out;
  if (!out) throw new Error("--out FILE.jsonl is required");
  const count = num("tasks", v.tasks);
  const opts = {
    seed: num("seed", v.seed),
    offset: num("offset", v.offset),
    temperature: num("temperature", v.temperature, false),
  };
  const tasks = pretrainTasks(num("worlds", v.worlds)).map((t) => t.id);
  await selectCliBackend(v.backend as string);
  const { model, tokenizer } = modelFromCheckpoint(await readCheckpointDir(v.checkpoint as string));
  const grammar = v.grammar ? new ActionGrammar(tokenizer) : undefined;
  const rolloutsFile = `${out.replace(/\.jsonl$/, "")}.rollouts.jsonl`;
  await writeFile(out, "");
  await writeFile(rolloutsFile, "");
  const written = { rollouts: 0, episodes: 0 };
  const t0 = performance.now();
  const batch = await collectTakeovers(
    model,
    tokenizer,
    tasks,
    count,
    { ...opts, ...(grammar ? { grammar } : {}) },
    async (b) => {
      // Written as they come, so that a stopped run keeps what it made.
      const lines = (xs: readonly object[]) => xs.map((x) => `${JSON.stringify(x)}\n`).join("");
      await appendFile(rolloutsFile, lines(b.rollouts.slice(written.rollouts)));
      await appendFile(out, lines(b.episodes.slice(written.episodes)));
      written.rollouts = b.rollouts.length;
      written.episodes = b.episodes.length;
      console.error(
        `${b.rollouts.length}/${count} rollouts (${b.rollouts.filter((r) => r.success).length} solved), ${b.episodes.length}/${b.tried} takeovers solved, ${((performance.now() - t0) / 1000).toFixed(0)}s`,
      );
    },
  );
  model.dispose();
  console.log(
    JSON.stringify({
      rollouts: batch.rollouts.length,
      solved: batch.rollouts.filter((r) => r.success).length,
      takeovers: batch.tried,
      kept: batch.episodes.length,
      out,
      rolloutsFile,
    }),
  );
}

main().catch((e: unknown) => {
  console.error((e as Error).message);
  process.exit(1);
});
