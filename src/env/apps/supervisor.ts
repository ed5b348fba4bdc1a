import { findRow, insert, table } from "../db";
import type { Json } from "../types";
import { type AppModule, defineApp, opt } from "./common";

/** The user's own helper app: profile, passwords, payment cards, and complete_task. */
export const supervisor: AppModule = {
  spec: defineApp(
    "supervisor",
    "The user you act for: profile, account passwords, finishing the task.",
    [
      {
        name: "show_profile",
        description: "Show the user's profile.",
        returns: "{first_name, last_name, email, phone, birthday, city}",
        auth: false,
        handler: (ctx) => {
          const me = findRow(ctx.db, "people", (r) => r.relationship === "self");
          if (!me) return {};
          const { first_name, last_name, email, phone, birthday, city } = me;
          return { first_name, last_name, email, phone, birthday, city } as Json;
        },
      },
      {
        name: "show_account_passwords",
        description: "Show the user's password for every app.",
        returns: "[{account_name, password}]",
        auth: false,
        handler: (ctx) => {
          const me = findRow(ctx.db, "people", (r) => r.relationship === "self");
          return table(ctx.db, "accounts")
            .filter((a) => a.username === me?.email || a.username === me?.phone)
            .map((a) => ({ account_name: a.app, password: a.password }));
        },
      },
      {
        name: "show_payment_cards",
        description: "Show the user's payment cards (for shop checkout).",
        returns: "[{card_id, name, last_four}]",
        auth: false,
        handler: (ctx) =>
          table(ctx.db, "cards").map((c) => ({
            card_id: c.id,
            name: c.name,
            last_four: c.last_four,
          })),
      },
      {
        name: "complete_task",
        description: "Finish the task. Give answer only when the task asks a question.",
        params: [opt("answer", "string", "the answer, when the task asks for one")],
        returns: "ends the episode",
        auth: false,
        handler: (ctx, args) => {
          ctx.complete(args.answer ?? null);
          return "Task marked complete.";
        },
      },
    ],
  ),
  seed: ({ db, rng }) => {
    const names = rng.sample(["Visa", "Mastercard", "Amex", "Debit"], 2);
    for (const name of names) insert(db, "cards", { name, last_four: String(rng.int(1000, 9999)) });
  },
};
