import * as tf from "@tensorflow/tfjs";
import { beforeAll, describe, expect, it } from "vitest";
import { collectDemonstrations, episodeCorpus, tokenizeEpisode } from "../agent/demos";
import { actionTokens } from "../agent/transcript";
import { presetConfig } from "../model/config";
import { GPT } from "../model/gpt";
import { Tokenizer } from "../model/tokenizer";
import { actionTokenCategories, argumentNll, valueNll } from "./argumentNll";

beforeAll(async () => {
  await tf.setBackend("cpu");
});

const demos = collectDemonstrations("train", [0]).slice(0, 2);
const tok = Tokenizer.build(episodeCorpus(demos), { maxWords: 200, minCount: 2 });

describe("argument NLL", () => {
  it("labels each value token of a call by its argument, first, rest or end, the rest as syntax", () => {
    const ids = actionTokens(tok, 'pay.login(username="ann", password="x7q") page_index=12)');
    const text = ids.map((i) => tok.tokenText(i));
    const cats = actionTokenCategories(tok, ids);
    expect(cats.length).toBe(ids.length);
    const of = (cat: string) => text.filter((_, i) => cats[i] === cat).join("");
    expect(of("password[first]")).toBe("x");
    expect(of("password[rest]")).toBe("7q");
    expect(of("username[first]") + of("username[rest]")).toBe("ann");
    expect(of("page_index[first]") + of("page_index[rest]")).toBe("12");
    // A quoted value ends at its closing quote (its own token), an unquoted one at `,` or `)`.
    expect([of("username[end]"), of("password[end]"), of("page_index[end]")]).toEqual([
      '"',
      '"',
      ")",
    ]);
    expect(text.filter((_, i) => cats[i] === "syntax").join("")).toBe(
      'pay.login(username=", password=") page_index=<eoa>',
    );
  });

  it("sums a whole value's NLL, its end included, per value", () => {
    const row = (key: string, tokens: number, total: number) => ({
      key,
      tokens,
      total,
      mean: total / tokens,
    });
    const rows = [
      row("password[first]", 2, 3),
      row("password[rest]", 10, 1),
      row("password[end]", 2, 4),
      row("amount[first]", 4, 2),
      row("syntax", 50, 5),
    ];
    expect(valueNll(rows)).toEqual([
      { arg: "password", values: 2, nats: 4 },
      { arg: "amount", values: 4, nats: 0.5 },
    ]);
  });

  it("scores every agent token of the demonstrations once, grouped", async () => {
    const model = new GPT(presetConfig("tiny", tok.size), 0);
    const rows = await argumentNll(model, tok, demos.slice(0, 1));
    const agentTokens = tokenizeEpisode(tok, demos[0] as (typeof demos)[0]).turns.reduce(
      (s, t) => s + t.action.length,
      0,
    );
    const all = rows.find((r) => r.key === "all");
    expect(all?.tokens).toBe(agentTokens);
    const parts = rows.filter((r) => r.key !== "all");
    expect(parts.reduce((s, r) => s + r.tokens, 0)).toBe(agentTokens);
    expect(parts.reduce((s, r) => s + r.total, 0)).toBeCloseTo(all?.total as number, 2);
    expect(rows.some((r) => r.key === "password[rest]")).toBe(true);
    // An untrained model: every token costs about ln(vocabulary size).
    expect(all?.mean).toBeGreaterThan(Math.log(tok.size) - 1);
    model.dispose();
  });
});
