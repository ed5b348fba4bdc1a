import { collectDemonstrations, tokenizeEpisode } from "./src/agent/demos";
import { contextBudget, segments } from "./src/agent/transcript";
import { readCheckpointDir } from "./src/model/checkpointFs";
import { modelFromCheckpoint } from "./src/model/checkpoint";
import { scoreSequences } from "./src/model/score";
import { selectBackend } from "./src/model/backend";
await selectBackend({ force: "wasm" });
const { model, tokenizer: tok } = modelFromCheckpoint(await readCheckpointDir(process.argv[2] ?? "public/checkpoints/base"));
const demos = collectDemonstrations(process.argv[3] as any ?? "dev", [0]).filter(d => d.success).slice(0, 12);
const cats: Record<string, number[]> = {};
const add = (k: string, x: number) => { (cats[k] ??= []).push(x); };
let shown = 0;
for (const d of demos) {
  const t = tokenizeEpisode(tok, d);
  const segs = segments(t.prompt, t.turns, contextBudget(model.config.context));
  const sc = await scoreSequences(model, segs.map(s => s.tokens));
  segs.forEach((s, si) => {
    const lp = sc.logprobs[si]!;
    let line: string[] = [];
    let inStr = false, strIdx = 0, argName = "";
    for (let i = 0; i < s.tokens.length; i++) {
      if (!s.agentMask[i]) { if (line.length && shown < 6) { console.log(line.join(" ")); shown++; } line = []; continue; }
      const txt = tok.tokenText(s.tokens[i]!);
      const v = -lp[i]!;
      const prev = i > 0 ? tok.tokenText(s.tokens[i-1]!) : "";
      if (prev.endsWith("=\"")) { inStr = true; strIdx = 0; argName = i > 1 ? tok.tokenText(s.tokens[i-2]!) : ""; }
      if (inStr && txt.startsWith("\"")) inStr = false;
      const cat = inStr ? `${argName}[${strIdx === 0 ? "first" : "rest"}]` : "other";
      if (inStr) strIdx++;
      add(cat, v); add("ALL", v);
      line.push(`${txt}:${v.toFixed(1)}`);
    }
    if (line.length && shown < 6) { console.log(line.join(" ")); shown++; }
  });
}
for (const [k, xs] of Object.entries(cats).sort((a,b)=>b[1].reduce((s,x)=>s+x,0)-a[1].reduce((s,x)=>s+x,0)))
  console.log(k.padEnd(28), "n", String(xs.length).padStart(5), "mean nll", (xs.reduce((s,x)=>s+x,0)/xs.length).toFixed(3), "total", xs.reduce((s,x)=>s+x,0).toFixed(0));
