import { addDays } from "../../apps/common";
import { insert } from "../../db";
import { WORDS } from "../../names";
import { allowUpdates } from "../expect";
import type { TaskTemplate } from "../types";
import {
  accountIds,
  contactEmail,
  fullName,
  minuteStamp,
  money,
  peopleWith,
  sentMoney,
  variantPick,
} from "./helpers";

/** Templates centred on the pay app. */

export const payContact: TaskTemplate = {
  id: "pay_contact",
  difficulty: 1,
  apps: ["phone", "pay"],
  build(world, rng, variant) {
    const person = variantPick(
      world,
      peopleWith(world, ["roommate", "friend", "sibling"]),
      variant,
      "pay_contact",
    );
    const amount = rng.int(3, 30) * 5;
    const note = rng.pick(WORDS);
    const name = fullName(person);
    return {
      instruction: `Send $${amount} to ${name} on pay with the note "${note}".`,
      params: { name, amount, note },
      expect: {
        changes: [sentMoney(world, person.email, amount, note)],
        allow: allowUpdates("pay_accounts", accountIds(world, [world.user.email, person.email]), [
          "balance",
        ]),
      },
    };
  },
  *solve(a, p) {
    const email = yield* contactEmail(a, p.name as string);
    const token = yield* a.login("pay");
    yield* a.call("pay", "send_money", {
      access_token: token,
      receiver_email: email,
      amount: p.amount,
      note: p.note,
    });
    yield* a.finish();
  },
};

export const payTotalReceived: TaskTemplate = {
  id: "pay_total_received",
  difficulty: 2,
  apps: ["phone", "pay"],
  build(world, rng, variant) {
    const person = variantPick(world, world.people, variant, "pay_total_received");
    const count = rng.int(4, 8);
    for (let i = 0; i < count; i++)
      insert(world.db, "transactions", {
        sender: person.email,
        receiver: world.user.email,
        amount: rng.int(2, 60),
        note: rng.pick(WORDS),
        created_at: minuteStamp(addDays(world.today, -rng.int(1, 90)), rng.int(8, 21), 15),
      });
    const total = money(
      world.db.transactions
        ?.filter((t) => t.sender === person.email && t.receiver === world.user.email)
        .reduce((s, t) => s + (t.amount as number), 0) ?? 0,
    );
    const name = fullName(person);
    return {
      instruction: `How much money have I received from ${name} on pay in total? Answer with a number.`,
      params: { name },
      expect: { changes: [], answer: total },
    };
  },
  *solve(a, p) {
    const email = yield* contactEmail(a, p.name as string);
    const token = yield* a.login("pay");
    const txs = yield* a.pages("pay", "show_transactions", {
      access_token: token,
      direction: "received",
      email,
    });
    const total = money(txs.reduce((s, t) => s + (t.amount as number), 0));
    yield* a.finish(total);
  },
};
