import { addDays, newestFirst } from "../../apps/common";
import { insert, table } from "../../db";
import type { Rng } from "../../rng";
import type { JsonObject, Person, Row } from "../../types";
import type { World } from "../../world";
import { ScriptError } from "../actor";
import { added, allowUpdates, sameAmount, updated } from "../expect";
import type { ExpectedChange, TaskTemplate } from "../types";
import {
  accountIds,
  contactEmail,
  contactsWith,
  deliverMail,
  dollars,
  fullName,
  groupOf,
  inboxOf,
  minuteStamp,
  sentMoney,
  stampDaysAgo,
  variantPick,
} from "./helpers";

/** Templates that move money on pay: requests to groups, approvals, refunds, paying from mail. */

/** `count` distinct whole amounts in [lo, hi]. */
function amounts(rng: Rng, count: number, lo: number, hi: number): number[] {
  return rng.sample(
    Array.from({ length: hi - lo + 1 }, (_, i) => lo + i),
    count,
  );
}

const GROUPS = ["roommate", "cousin", "classmate", "neighbor"];
const REQUEST_NOTES = [
  "cabin trip",
  "concert tickets",
  "groceries",
  "pizza night",
  "museum passes",
  "road trip gas",
  "birthday gift",
  "utilities",
];

/** Requests the same amount from everyone with a relationship (a group of 2 to 4). */
export const payRequestRelationship: TaskTemplate = {
  id: "pay_request_relationship",
  difficulty: 2,
  apps: ["phone", "pay"],
  build(world, rng, variant) {
    const relationship = variantPick(world, GROUPS, variant, "pay_request_relationship");
    const group = groupOf(world, rng, relationship, rng.int(2, 4), 4);
    const amount = rng.int(3, 16) * 5;
    const note = variantPick(world, REQUEST_NOTES, variant, "pay_request_relationship.note");
    return {
      instruction: `Request $${amount} from each of my ${relationship}s on pay with the note "${note}".`,
      params: { relationship, amount, note },
      expect: {
        changes: group.map((p) =>
          added(
            `requested $${amount} from ${p.email} with note "${note}"`,
            "payment_requests",
            (r) =>
              r.requester === world.user.email &&
              r.payer === p.email &&
              sameAmount(r.amount, amount) &&
              r.note === note &&
              r.status === "pending",
          ),
        ),
      },
    };
  },
  *solve(a, p) {
    const group = yield* contactsWith(a, p.relationship as string);
    if (group.length === 0) throw new ScriptError(`no ${p.relationship} in contacts`);
    const token = yield* a.login("pay");
    for (const c of group)
      yield* a.call("pay", "request_money", {
        access_token: token,
        payer_email: c.email,
        amount: p.amount,
        note: p.note,
      });
    yield* a.finish();
  },
};

/** Adds a payment request to the user from `requester`. */
function requestFrom(
  world: World,
  rng: Rng,
  requester: string,
  amount: number,
  status: string,
  days: number,
): Row {
  return insert(world.db, "payment_requests", {
    requester,
    payer: world.user.email,
    amount,
    note: rng.pick(REQUEST_NOTES),
    status,
    created_at: stampDaysAgo(world, rng, days, [7, 21]),
  });
}

/**
 * Pending requests from `person` (2 or 3 with `existing`, distinct amounts, the oldest older than
 * the five pending ones from others), some of theirs already settled, and others' requests.
 */
function addRequests(world: World, rng: Rng, person: Person, existing: number[]): void {
  const want = Math.max(0, rng.int(2, 3) - existing.length);
  const fresh = amounts(rng, want + existing.length, 6, 95).filter((x) => !existing.includes(x));
  const settled = () => rng.pick(["approved", "declined"]);
  fresh.slice(0, want).forEach((amt, i) => {
    const days = i === 0 ? rng.int(40, 58) : rng.int(1, 35);
    requestFrom(world, rng, person.email, amt, "pending", days);
  });
  const done = rng.int(1, 2);
  for (let i = 0; i < done; i++)
    requestFrom(world, rng, person.email, rng.int(5, 80), settled(), rng.int(1, 58));
  const others = world.people.filter((p) => p.id !== person.id);
  for (let i = 0; i < 5; i++)
    requestFrom(world, rng, rng.pick(others).email, rng.int(5, 80), "pending", rng.int(1, 30));
  for (let i = 0; i < 2; i++)
    requestFrom(world, rng, rng.pick(others).email, rng.int(5, 80), settled(), rng.int(1, 58));
}

/** Approves every pending request from one person; older ones sit past the first page. */
export const payApproveFrom: TaskTemplate = {
  id: "pay_approve_from",
  difficulty: 2,
  apps: ["phone", "pay"],
  build(world, rng, variant) {
    const person = variantPick(world, world.people, variant, "pay_approve_from");
    const me = world.user.email;
    const fromThem = () =>
      table(world.db, "payment_requests").filter(
        (r) => r.requester === person.email && r.payer === me && r.status === "pending",
      );
    addRequests(
      world,
      rng,
      person,
      fromThem().map((r) => r.amount as number),
    );
    const pending = fromThem();
    const name = fullName(person);
    const changes: ExpectedChange[] = pending.flatMap((r) => [
      updated(
        `approved request ${r.id}`,
        "payment_requests",
        r.id,
        (after) => after.status === "approved",
        ["status"],
      ),
      sentMoney(world, person.email, r.amount as number, r.note as string),
    ]);
    return {
      instruction: `Approve every pending payment request I received from ${name} on pay.`,
      params: { name },
      expect: {
        changes,
        allow: allowUpdates("pay_accounts", accountIds(world, [me, person.email]), ["balance"]),
      },
    };
  },
  *solve(a, p) {
    const email = yield* contactEmail(a, p.name as string);
    const token = yield* a.login("pay");
    const pending = yield* a.pages("pay", "show_payment_requests", {
      access_token: token,
      direction: "received",
      status: "pending",
    });
    for (const r of pending.filter((x) => x.requester === email))
      yield* a.call("pay", "approve_payment_request", {
        access_token: token,
        request_id: r.request_id,
      });
    yield* a.finish();
  },
};

/** Sends back the amount of one person's latest payment to the user (their latest is a mistake). */
export const payRefundLatest: TaskTemplate = {
  id: "pay_refund_latest",
  difficulty: 2,
  apps: ["phone", "pay"],
  build(world, rng, variant) {
    const person = variantPick(world, world.people, variant, "pay_refund_latest");
    const me = world.user.email;
    const [mistake, ...older] = amounts(rng, rng.int(3, 5), 8, 150) as [number, ...number[]];
    const tx = (from: string, to: string, amount: number, at: string, note: string) =>
      insert(world.db, "transactions", {
        sender: from,
        receiver: to,
        amount,
        note,
        created_at: at,
      });
    const fromThem = () =>
      table(world.db, "transactions").filter((t) => t.sender === person.email && t.receiver === me);
    for (const amt of older)
      tx(
        person.email,
        me,
        amt,
        stampDaysAgo(world, rng, rng.int(5, 45), [7, 21]),
        rng.pick(REQUEST_NOTES),
      );
    // The mistake is the newest from them (after every seeded one, which end at 21:59)...
    const minute = rng.int(0, 59);
    let at = minuteStamp(addDays(world.today, -rng.int(1, 4)), 22, minute);
    if (fromThem().some((t) => String(t.created_at) >= at))
      at = minuteStamp(addDays(world.today, -1), 22, minute);
    const wrong = tx(
      person.email,
      me,
      mistake + (rng.chance(0.3) ? 0.5 : 0),
      at,
      rng.pick(REQUEST_NOTES),
    );
    // ... but the user paid them later still: the latest transaction with them is a sent one.
    tx(
      me,
      person.email,
      rng.int(5, 60),
      minuteStamp(addDays(world.today, -1), 23, minute),
      rng.pick(REQUEST_NOTES),
    );
    const latest = newestFirst(fromThem(), "created_at")[0] as Row;
    if (latest.id !== wrong.id) throw new Error("pay_refund_latest: the mistake is not the latest");
    const amount = wrong.amount as number;
    const name = fullName(person);
    return {
      instruction: `${name} sent me money by mistake in their most recent payment to me on pay; send the same amount back with the note "refund".`,
      params: { name },
      expect: {
        changes: [sentMoney(world, person.email, amount, "refund")],
        allow: allowUpdates("pay_accounts", accountIds(world, [me, person.email]), ["balance"]),
      },
    };
  },
  *solve(a, p) {
    const email = yield* contactEmail(a, p.name as string);
    const token = yield* a.login("pay");
    const received = (yield* a.call("pay", "show_transactions", {
      access_token: token,
      direction: "received",
      email,
    })) as JsonObject[];
    const latest = received[0];
    if (!latest) throw new ScriptError(`no payment from ${email}`);
    yield* a.call("pay", "send_money", {
      access_token: token,
      receiver_email: email,
      amount: latest.amount,
      note: "refund",
    });
    yield* a.finish();
  },
};

const ASKS = [
  ["Concert tickets", "the concert tickets"],
  ["Dinner last night", "my share of dinner last night"],
  ["Cabin deposit", "the cabin deposit"],
  ["Groceries", "the groceries I picked up"],
  ["Birthday gift", "the birthday gift we split"],
  ["Taxi", "the taxi from the airport"],
  ["Museum passes", "the museum passes"],
];
const THANKS = ["thanks", "here you go", "as asked", "paid"];

/** Pays a person the amount their latest email asks for (older emails ask for other amounts). */
export const payFromMail: TaskTemplate = {
  id: "pay_from_mail",
  difficulty: 3,
  apps: ["mail", "pay", "phone"],
  build(world, rng, variant) {
    const person = variantPick(world, world.people, variant, "pay_from_mail");
    const other = rng.pick(world.people.filter((p) => p.id !== person.id)) as Person;
    const me = world.user.email;
    const asks = rng.sample(ASKS, 4);
    const sums = amounts(rng, 4, 12, 140).map((x, i) => (i === 0 && rng.chance(0.4) ? x + 0.5 : x));
    const ask = (from: Person, i: number, at: string) => {
      const [subject, thing] = asks[i] as [string, string];
      const body = `Hi ${world.user.first_name}, could you send me $${dollars(sums[i] as number)} for ${thing}? Thanks!`;
      return deliverMail(world.db, from.email, [me], subject, body, at, i !== 0);
    };
    const days = rng.sample([6, 9, 13, 17, 22, 28], 2);
    ask(person, 1, stampDaysAgo(world, rng, days[0] as number, [7, 21]));
    ask(person, 2, stampDaysAgo(world, rng, days[1] as number, [7, 21]));
    let at = stampDaysAgo(world, rng, rng.int(1, 4), [7, 21]);
    const theirs = () => inboxOf(world).filter((e) => e.sender === person.email);
    if (theirs().some((e) => String(e.sent_at) >= at))
      at = minuteStamp(world.today, 7, rng.int(10, 59));
    const latest = ask(person, 0, at);
    // Someone else asked for money even more recently.
    ask(other, 3, minuteStamp(world.today, 8, rng.int(0, 59)));
    if ((newestFirst(theirs(), "sent_at")[0] as Row).id !== latest.id)
      throw new Error("pay_from_mail: the ask is not the latest email");
    const amount = sums[0] as number;
    const note = variantPick(world, THANKS, variant, "pay_from_mail.note");
    const name = fullName(person);
    return {
      instruction: `Pay ${name} on pay the amount they asked for in their latest email to me, with the note "${note}".`,
      params: { name, note },
      expect: {
        changes: [sentMoney(world, person.email, amount, note)],
        allow: allowUpdates("pay_accounts", accountIds(world, [me, person.email]), ["balance"]),
      },
    };
  },
  *solve(a, p) {
    const email = yield* contactEmail(a, p.name as string);
    const mailToken = yield* a.login("mail");
    const found = (yield* a.call("mail", "show_inbox", {
      access_token: mailToken,
      query: email,
    })) as JsonObject[];
    const latest = found.find((e) => e.sender === email);
    if (!latest) throw new ScriptError(`no email from ${email}`);
    const mail = (yield* a.call("mail", "show_email", {
      access_token: mailToken,
      email_id: latest.email_id,
    })) as JsonObject;
    const m = /\$(\d+(?:\.\d{1,2})?)/.exec(String(mail.body));
    if (!m) throw new ScriptError("no amount in the email");
    const token = yield* a.login("pay");
    yield* a.call("pay", "send_money", {
      access_token: token,
      receiver_email: email,
      amount: Number(m[1]),
      note: p.note,
    });
    yield* a.finish();
  },
};

export const MONEY_TEMPLATES: TaskTemplate[] = [
  payRequestRelationship,
  payApproveFrom,
  payRefundLatest,
  payFromMail,
];
