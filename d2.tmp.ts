import { collectDemonstrations, episodeCorpus, tokenizeEpisode } from "./src/agent/demos";
import { tasksOf, trainWorldTasks, APPS, formatApiDoc } from "./src/env";
import { Tokenizer } from "./src/model/tokenizer";
const t0 = Date.now();
const demos = collectDemonstrations([...tasksOf("train"), ...trainWorldTasks(36)], [0]);
console.log(demos.length, "episodes", demos.filter(d=>d.success).length, "ok", Date.now()-t0, "ms");
for (const mw of [700, 1000, 1500]) {
const tok = Tokenizer.build([...episodeCorpus(demos), ...APPS.flatMap((a) => a.apis.map(formatApiDoc))], { maxWords: mw, minCount: 3 });
const n = demos.map(d => { const t = tokenizeEpisode(tok, d); return t.prompt.length + t.turns.reduce((s,x)=>s+x.action.length+x.observation.length,0); });
const dev = collectDemonstrations("dev", [0]);
const nd = dev.map(d => { const t = tokenizeEpisode(tok, d); return t.prompt.length + t.turns.reduce((s,x)=>s+x.action.length+x.observation.length,0); });
console.log(mw, "vocab", tok.size, "tokens", n.reduce((a,b)=>a+b,0), "mean", (n.reduce((a,b)=>a+b,0)/n.length).toFixed(0), "max", Math.max(...n), "dev mean", (nd.reduce((a,b)=>a+b,0)/nd.length).toFixed(0));
console.log(tok.encode(`pay.login(username="vera.ford@mail.com", password="5rwcp5") Send $145 to Rhea Tran note="internet"`).map(i=>tok.tokenText(i)).join(" "));
}
