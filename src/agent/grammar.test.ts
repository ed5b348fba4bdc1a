import * as tf from "@tensorflow/tfjs";
import { beforeAll, describe, expect, it } from "vitest";
import { createEpisode, parseAction, tasksOf } from "../env";
import { Rng } from "../env/rng";
import { presetConfig } from "../model/config";
import { generate } from "../model/decode";
import { GPT } from "../model/gpt";
import { EOA, Tokenizer } from "../model/tokenizer";
import { collectDemonstrations, episodeCorpus } from "./demos";
import { createExpert } from "./expert";
import { ActionGrammar, CallCursor } from "./grammar";
import { runEpisode } from "./run";
import { actionTokens } from "./transcript";

beforeAll(async () => {
  await tf.setBackend("cpu");
});

const feedAll = (text: string): CallCursor | null => {
  const c = new CallCursor();
  for (const ch of text) if (!c.feed(ch)) return null;
  return c;
};

describe("the action grammar", () => {
  it("accepts well-formed calls to existing APIs and refuses the rest", () => {
    expect(feedAll('pay.login(username="a@b.c", password="x1")')?.mode).toBe("end");
    expect(feedAll("supervisor.show_account_passwords()")?.mode).toBe("end");
    expect(feedAll('pay.show_transactions(access_token="t", page_index=2)')?.mode).toBe("end");
    expect(feedAll('pay.show_transactions(access_token="t", direction=null)')?.mode).toBe("end");
    expect(feedAll('supervisor.complete_task(answer="3")')?.mode).toBe("end");
    // Unknown app or API, an argument the API does not take, twice, or missing before ")".
    expect(feedAll("pay.show_product(")).toBeNull();
    expect(feedAll("bank.")).toBeNull();
    expect(feedAll('pay.login(username="a", path=')).toBeNull();
    expect(feedAll('pay.login(username="a", username=')).toBeNull();
    expect(feedAll('pay.login(username="a")')).toBeNull();
    // Values of the parameter's type; canonical spacing; nothing after the closing parenthesis.
    expect(feedAll('pay.show_transactions(access_token="t", page_index="2"')).toBeNull();
    expect(feedAll("pay.login(username=5")).toBeNull();
    expect(feedAll('pay.login(username="a",password=')).toBeNull();
    expect(feedAll("supervisor.show_account_passwords()=")).toBeNull();
    // A number only while it stays a prefix of a valid one (not a date run on until the cap).
    expect(feedAll('mail.show_email(access_token="t", email_id=44-')).toBeNull();
    expect(feedAll('mail.show_email(access_token="t", email_id=01')).toBeNull();
    expect(feedAll('mail.show_email(access_token="t", email_id=-4)')?.mode).toBe("end");
    expect(
      feedAll('pay.send_money(access_token="t", receiver_email="a", amount=1.5e'),
    ).not.toBeNull();
    expect(feedAll('pay.send_money(access_token="t", receiver_email="a", amount=1.5.')).toBeNull();
    expect(
      feedAll('pay.send_money(access_token="t", receiver_email="a", amount=12.50)')?.mode,
    ).toBe("end");
    // A string may hold anything, escapes included.
    expect(
      feedAll('notes.create_note(access_token="t", title="a \\"b\\" (c), d=e"'),
    ).not.toBeNull();
  });

  it("allows every token of every expert action, then <eoa>; decoding under it yields calls that parse", async () => {
    const demos = collectDemonstrations("train", [0]).slice(0, 20);
    const tok = Tokenizer.build(episodeCorpus(demos), { maxWords: 300, minCount: 2 });
    const grammar = new ActionGrammar(tok);
    let checked = 0;
    for (const task of [...tasksOf("train"), ...tasksOf("test_challenge")]) {
      const run = runEpisode(createEpisode(task.id), createExpert(task));
      for (const action of run.actions) {
        const c = grammar.start();
        for (const id of actionTokens(tok, action)) {
          expect(c.allowed()[id], `${action}: ${tok.tokenText(id)}`).toBe(1);
          c.push(id);
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(1000);
    // An untrained model, constrained: every finished action parses, and each sampled token's
    // log-prob is that of the restricted, renormalized distribution (the allowed mass sums to 1).
    const model = new GPT({ ...presetConfig("tiny", tok.size), copyHead: true }, 1);
    const contexts = Array.from({ length: 6 }, (_, i) => [1, 10 + i, 2]);
    const constraints = contexts.map(() => grammar.start());
    const gen = await generate(model, contexts, {
      temperature: 1,
      maxTokens: 60,
      rng: new Rng(4),
      constraints,
    });
    let finished = 0;
    gen.tokens.forEach((ids) => {
      if (ids.at(-1) !== EOA) return;
      finished++;
      const text = tok.decode(ids.slice(0, -1));
      expect(parseAction(text).ok, text).toBe(true);
    });
    expect(finished).toBeGreaterThan(0);
    model.dispose();
  });
});
