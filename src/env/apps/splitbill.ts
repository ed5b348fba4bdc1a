import { insert, removeRow, table } from "../db";
import { ApiError, type CallContext, type Person, type Row } from "../types";
import {
  type AppModule,
  defineApp,
  getRow,
  loginApi,
  newestFirst,
  nonEmpty,
  opt,
  pick,
  positiveAmount,
  req,
  stampDaysAgo,
} from "./common";

const EXPENSE_FIELDS = [
  "expense_id",
  "payer",
  "amount",
  "description",
  "split_among",
  "created_at",
];
const expenseView = (r: Row) => pick({ ...r, expense_id: r.id }, EXPENSE_FIELDS);

/** A group the logged-in user is a member of. */
function myGroup(ctx: CallContext, id: number): Row {
  const g = getRow(ctx.db, "split_groups", id, "group");
  if (!(g.members as string[]).includes(ctx.user)) throw new ApiError(`No group with id ${id}.`);
  return g;
}

/** Net per member: what they paid minus their equal shares; positive = is owed money. */
function balances(members: string[], expenses: Row[]): { email: string; balance: number }[] {
  const net = new Map(members.map((m) => [m, 0]));
  for (const e of expenses) {
    const among = e.split_among as string[];
    const amount = e.amount as number;
    const payer = e.payer as string;
    net.set(payer, (net.get(payer) ?? 0) + amount);
    for (const m of among) net.set(m, (net.get(m) ?? 0) - amount / among.length);
  }
  return [...net].map(([email, b]) => ({ email, balance: Math.round(b * 100) / 100 || 0 }));
}

/** [group name, relationship of the other members, how many, expense descriptions, amount range] */
const GROUPS: [string, string, number, string[], [number, number]][] = [
  [
    "Apartment",
    "roommate",
    2,
    [
      "rent share",
      "groceries",
      "internet",
      "electricity",
      "cleaning supplies",
      "water bill",
      "pizza night",
    ],
    [12, 180],
  ],
  [
    "Lake Tahoe trip",
    "friend",
    4,
    [
      "cabin rental",
      "gas",
      "groceries",
      "ski passes",
      "dinner",
      "boat rental",
      "snacks",
      "parking",
    ],
    [20, 260],
  ],
  [
    "Office lunch",
    "coworker",
    5,
    ["tacos", "sushi", "pizza", "ramen", "sandwiches", "thai food"],
    [30, 95],
  ],
];

/** Splitbill: groups that share expenses equally, and who owes whom. */
export const splitbill: AppModule = {
  spec: defineApp("splitbill", "Split bills in groups: shared expenses and balances.", [
    loginApi("splitbill"),
    {
      name: "show_groups",
      description: "The groups you are a member of.",
      returns: "[{group_id, name, member_count}]",
      paged: true,
      handler: (ctx) =>
        table(ctx.db, "split_groups")
          .filter((g) => (g.members as string[]).includes(ctx.user))
          .sort((a, b) => a.id - b.id)
          .map((g) => ({
            group_id: g.id,
            name: g.name as string,
            member_count: (g.members as string[]).length,
          })),
    },
    {
      name: "show_group",
      description: "Show one of your groups with its members' emails.",
      params: [req("group_id", "integer", "")],
      returns: "{group_id, name, members}",
      errors: ["group not found"],
      handler: (ctx, args) => {
        const g = myGroup(ctx, args.group_id as number);
        return { group_id: g.id, name: g.name as string, members: g.members as string[] };
      },
    },
    {
      name: "show_expenses",
      description: "A group's expenses, newest first.",
      params: [req("group_id", "integer", "")],
      returns: `[{${EXPENSE_FIELDS.join(", ")}}]`,
      errors: ["group not found"],
      paged: true,
      handler: (ctx, args) => {
        const g = myGroup(ctx, args.group_id as number);
        return newestFirst(
          table(ctx.db, "expenses").filter((e) => e.group_id === g.id),
          "created_at",
        ).map(expenseView);
      },
    },
    {
      name: "add_expense",
      description:
        "Record an expense you paid, split equally among some or all members of the group.",
      params: [
        req("group_id", "integer", ""),
        req("amount", "number", "greater than 0, at most 2 decimals"),
        req("description", "string", ""),
        opt("split_among", "string[]", "member emails sharing the cost; all members if not given"),
      ],
      returns: '{"expense_id": integer}',
      errors: [
        "group not found",
        "bad amount",
        "empty description",
        "split_among has a non-member",
      ],
      mutates: true,
      handler: (ctx, args) => {
        const g = myGroup(ctx, args.group_id as number);
        const members = g.members as string[];
        const amount = positiveAmount(args.amount);
        const description = nonEmpty(args.description, "description");
        const among =
          args.split_among == null ? members : [...new Set(args.split_among as string[])];
        if (among.length === 0) throw new ApiError("split_among must not be empty.");
        for (const m of among)
          if (!members.includes(m)) throw new ApiError(`${m} is not a member of group ${g.id}.`);
        const row = insert(ctx.db, "expenses", {
          group_id: g.id,
          payer: ctx.user,
          amount,
          description,
          split_among: among.slice(),
          created_at: ctx.now,
        });
        return { expense_id: row.id };
      },
    },
    {
      name: "delete_expense",
      description: "Delete an expense you paid.",
      params: [req("expense_id", "integer", "")],
      returns: "a confirmation",
      errors: ["expense not found", "you did not pay this expense"],
      mutates: true,
      handler: (ctx, args) => {
        const e = getRow(ctx.db, "expenses", args.expense_id as number, "expense");
        myGroup(ctx, e.group_id as number);
        if (e.payer !== ctx.user)
          throw new ApiError(
            `Expense ${e.id} was paid by ${e.payer}; you can only delete your own.`,
          );
        removeRow(ctx.db, "expenses", e.id);
        return `Expense ${e.id} deleted.`;
      },
    },
    {
      name: "show_balances",
      description:
        "Each member's net balance in a group: positive means the group owes them, negative means they owe.",
      params: [req("group_id", "integer", "")],
      returns: "[{email, balance}] in member order",
      errors: ["group not found"],
      handler: (ctx, args) => {
        const g = myGroup(ctx, args.group_id as number);
        return balances(
          g.members as string[],
          table(ctx.db, "expenses").filter((e) => e.group_id === g.id),
        );
      },
    },
  ]),
  seed: ({ db, user, people, today, rng }) => {
    const taken = new Set<string>();
    for (const [name, rel, n, descriptions, [lo, hi]] of GROUPS) {
      const pool = [
        ...rng.shuffle(people.filter((p) => p.relationship === rel && !taken.has(p.email))),
        ...rng.shuffle(people.filter((p) => p.relationship !== rel && !taken.has(p.email))),
      ];
      const others: Person[] = pool.slice(0, n);
      for (const p of others) taken.add(p.email);
      const members = [user.email, ...others.map((p) => p.email)];
      const group = insert(db, "split_groups", { name, members });
      const count = rng.int(3, Math.min(8, descriptions.length));
      const days = rng.sample(
        Array.from({ length: 45 }, (_, i) => i + 1),
        count,
      );
      rng.sample(descriptions, count).forEach((description, i) => {
        const payer = rng.pick(members);
        const among = rng.chance(0.75)
          ? members
          : rng.sample(members, rng.int(2, members.length - 1));
        insert(db, "expenses", {
          group_id: group.id,
          payer,
          amount: rng.int(lo * 100, hi * 100) / 100,
          description,
          split_among: among.slice(),
          created_at: stampDaysAgo(today, rng, days[i] as number, [8, 22]),
        });
      });
    }
  },
};
