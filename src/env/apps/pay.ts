import { findRow, insert, table } from "../db";
import { WORDS } from "../names";
import { ApiError, type Row } from "../types";
import {
  type AppModule,
  defineApp,
  getRow,
  loginApi,
  newestFirst,
  opt,
  pick,
  positiveAmount,
  req,
  stampDaysAgo,
} from "./common";

const TX_FIELDS = ["transaction_id", "sender", "receiver", "amount", "note", "created_at"];
const txView = (r: Row) => pick({ ...r, transaction_id: r.id }, TX_FIELDS);
const REQ_FIELDS = ["request_id", "requester", "payer", "amount", "note", "status", "created_at"];
const reqView = (r: Row) => pick({ ...r, request_id: r.id }, REQ_FIELDS);

function account(db: Parameters<typeof table>[0], email: string): Row {
  const acc = findRow(db, "pay_accounts", (a) => a.email === email);
  if (!acc) throw new ApiError(`No pay account with email ${email}.`);
  return acc;
}

function transfer(
  ctx: { db: Parameters<typeof table>[0]; now: string },
  from: string,
  to: string,
  amount: number,
  note: string,
): Row {
  if (from === to) throw new ApiError("You cannot send money to yourself.");
  const src = account(ctx.db, from);
  const dst = account(ctx.db, to);
  if ((src.balance as number) < amount)
    throw new ApiError(`Insufficient balance: ${src.balance} available, ${amount} needed.`);
  src.balance = Math.round(((src.balance as number) - amount) * 100) / 100;
  dst.balance = Math.round(((dst.balance as number) + amount) * 100) / 100;
  return insert(ctx.db, "transactions", {
    sender: from,
    receiver: to,
    amount,
    note,
    created_at: ctx.now,
  });
}

/** Pay: balances, money transfers and payment requests between people, by email. */
export const pay: AppModule = {
  spec: defineApp("pay", "Send and request money by email; balance and transaction history.", [
    loginApi("pay"),
    {
      name: "show_balance",
      description: "Show your balance.",
      returns: '{"balance": number}',
      handler: (ctx) => ({ balance: account(ctx.db, ctx.user).balance as number }),
    },
    {
      name: "send_money",
      description: "Send money from your balance to another user.",
      params: [
        req("receiver_email", "string", "the receiver's email"),
        req("amount", "number", "greater than 0, at most 2 decimals"),
        opt("note", "string", "", ""),
      ],
      returns: '{"transaction_id": integer}',
      errors: ["no account with that email", "insufficient balance", "bad amount"],
      mutates: true,
      handler: (ctx, args) => {
        const tx = transfer(
          ctx,
          ctx.user,
          args.receiver_email as string,
          positiveAmount(args.amount),
          args.note as string,
        );
        return { transaction_id: tx.id };
      },
    },
    {
      name: "show_transactions",
      description:
        "Your transactions, newest first; optionally only sent or received, or with one person.",
      params: [
        opt("direction", "string", "sent or received"),
        opt("email", "string", "the other person's email"),
      ],
      returns: `[{${TX_FIELDS.join(", ")}}]`,
      errors: ["bad direction"],
      paged: true,
      handler: (ctx, args) => {
        const dir = args.direction;
        if (dir != null && dir !== "sent" && dir !== "received")
          throw new ApiError("direction must be sent or received.");
        return newestFirst(
          table(ctx.db, "transactions").filter(
            (t) =>
              (dir !== "received" &&
                t.sender === ctx.user &&
                (!args.email || t.receiver === args.email)) ||
              (dir !== "sent" &&
                t.receiver === ctx.user &&
                (!args.email || t.sender === args.email)),
          ),
          "created_at",
        ).map(txView);
      },
    },
    {
      name: "show_transaction",
      description: "Show one of your transactions.",
      params: [req("transaction_id", "integer", "")],
      returns: `{${TX_FIELDS.join(", ")}}`,
      errors: ["transaction not found"],
      handler: (ctx, args) => {
        const t = getRow(ctx.db, "transactions", args.transaction_id as number, "transaction");
        if (t.sender !== ctx.user && t.receiver !== ctx.user)
          throw new ApiError(`No transaction with id ${t.id}.`);
        return txView(t);
      },
    },
    {
      name: "request_money",
      description: "Ask another user to pay you.",
      params: [
        req("payer_email", "string", "who should pay"),
        req("amount", "number", "greater than 0"),
        opt("note", "string", "", ""),
      ],
      returns: '{"request_id": integer}',
      errors: ["no account with that email", "bad amount"],
      mutates: true,
      handler: (ctx, args) => {
        const payer = args.payer_email as string;
        account(ctx.db, payer);
        if (payer === ctx.user) throw new ApiError("You cannot request money from yourself.");
        const r = insert(ctx.db, "payment_requests", {
          requester: ctx.user,
          payer,
          amount: positiveAmount(args.amount),
          note: args.note as string,
          status: "pending",
          created_at: ctx.now,
        });
        return { request_id: r.id };
      },
    },
    {
      name: "show_payment_requests",
      description: "Requests others sent you (received) or you sent (sent), newest first.",
      params: [
        opt("direction", "string", "received or sent", "received"),
        opt("status", "string", "pending, approved or declined"),
      ],
      returns: `[{${REQ_FIELDS.join(", ")}}]`,
      errors: ["bad direction"],
      paged: true,
      handler: (ctx, args) => {
        if (args.direction !== "received" && args.direction !== "sent")
          throw new ApiError("direction must be received or sent.");
        const key = args.direction === "received" ? "payer" : "requester";
        return newestFirst(
          table(ctx.db, "payment_requests").filter(
            (r) => r[key] === ctx.user && (!args.status || r.status === args.status),
          ),
          "created_at",
        ).map(reqView);
      },
    },
    {
      name: "approve_payment_request",
      description: "Pay a pending request someone sent you.",
      params: [req("request_id", "integer", "")],
      returns: '{"transaction_id": integer}',
      errors: ["request not found", "request is not pending", "insufficient balance"],
      mutates: true,
      handler: (ctx, args) => {
        const r = getRow(ctx.db, "payment_requests", args.request_id as number, "payment request");
        if (r.payer !== ctx.user) throw new ApiError(`No payment request with id ${r.id}.`);
        if (r.status !== "pending") throw new ApiError(`Request ${r.id} is already ${r.status}.`);
        const tx = transfer(
          ctx,
          ctx.user,
          r.requester as string,
          r.amount as number,
          r.note as string,
        );
        r.status = "approved";
        return { transaction_id: tx.id };
      },
    },
    {
      name: "decline_payment_request",
      description: "Decline a pending request someone sent you.",
      params: [req("request_id", "integer", "")],
      returns: "a confirmation",
      errors: ["request not found", "request is not pending"],
      mutates: true,
      handler: (ctx, args) => {
        const r = getRow(ctx.db, "payment_requests", args.request_id as number, "payment request");
        if (r.payer !== ctx.user) throw new ApiError(`No payment request with id ${r.id}.`);
        if (r.status !== "pending") throw new ApiError(`Request ${r.id} is already ${r.status}.`);
        r.status = "declined";
        return "Request declined.";
      },
    },
  ]),
  seed: ({ db, user, people, today, rng }) => {
    for (const p of [user, ...people])
      insert(db, "pay_accounts", {
        email: p.email,
        balance: p === user ? rng.int(800, 2000) : rng.int(50, 900),
      });
    for (let i = 0; i < 16; i++) {
      const other = rng.pick(people).email;
      const sent = rng.chance(0.5);
      insert(db, "transactions", {
        sender: sent ? user.email : other,
        receiver: sent ? other : user.email,
        amount: rng.int(5, 120),
        note: rng.pick(WORDS),
        created_at: stampDaysAgo(today, rng, [1, 60], [8, 21]),
      });
    }
    for (let i = 0; i < 6; i++) {
      const other = rng.pick(people).email;
      const incoming = rng.chance(0.6);
      insert(db, "payment_requests", {
        requester: incoming ? other : user.email,
        payer: incoming ? user.email : other,
        amount: rng.int(5, 80),
        note: rng.pick(WORDS),
        status: rng.pick(["pending", "pending", "approved", "declined"]),
        created_at: stampDaysAgo(today, rng, [1, 60], [8, 21]),
      });
    }
  },
};
