import { insert } from "../db";
import { ApiError, type Json, type Person, type Row } from "../types";
import {
  type AppModule,
  addDays,
  defineApp,
  deleteOwnedApi,
  getRow,
  isoDate,
  loginApi,
  nonEmpty,
  opt,
  owned,
  peopleWith,
  personWith,
  pick,
  req,
  stampDaysAgo,
} from "./common";

const TODO_FIELDS = ["todo_id", "title", "list", "due_date", "done"];
const todoView = (r: Row) => pick({ ...r, todo_id: r.id }, TODO_FIELDS);

function listName(value: Json): string {
  return nonEmpty(value, "list").toLowerCase();
}

/** By due date (no due date last), then id. */
function byDueDate(a: Row, b: Row): number {
  const x = a.due_date as string | null;
  const y = b.due_date as string | null;
  if (x !== y) {
    if (x === null) return 1;
    if (y === null) return -1;
    return x < y ? -1 : 1;
  }
  return a.id - b.id;
}

/** Todo: the user's to-do items in named lists, with due dates. */
export const todo: AppModule = {
  spec: defineApp("todo", "To-do items in lists (personal, work, shopping, ...) with due dates.", [
    loginApi("todo"),
    {
      name: "show_todos",
      description:
        "Your to-do items sorted by due date (items without one last); optionally one list, and only done or only open items.",
      params: [
        opt("list", "string", "e.g. personal, work, shopping"),
        opt("done", "boolean", "true: only done items; false: only open items"),
      ],
      returns: `[{${TODO_FIELDS.join(", ")}}]`,
      paged: true,
      handler: (ctx, args) => {
        const list = typeof args.list === "string" ? args.list.trim().toLowerCase() : null;
        return owned(ctx, "todos")
          .filter((r) => (!list || r.list === list) && (args.done == null || r.done === args.done))
          .sort(byDueDate)
          .map(todoView);
      },
    },
    {
      name: "show_lists",
      description: "Your lists with how many items are open and done.",
      returns: "[{list, open, done}] sorted by list name",
      handler: (ctx) => {
        const counts = new Map<string, { list: string; open: number; done: number }>();
        for (const r of owned(ctx, "todos")) {
          const name = r.list as string;
          const c = counts.get(name) ?? { list: name, open: 0, done: 0 };
          if (r.done) c.done++;
          else c.open++;
          counts.set(name, c);
        }
        return [...counts.values()].sort((a, b) =>
          a.list < b.list ? -1 : a.list > b.list ? 1 : 0,
        );
      },
    },
    {
      name: "create_todo",
      description: "Add a to-do item; a new list name creates that list.",
      params: [
        req("title", "string", ""),
        opt("list", "string", "", "personal"),
        opt("due_date", "string", "like 2026-05-14"),
      ],
      returns: '{"todo_id": integer}',
      errors: ["empty title or list", "bad due_date"],
      mutates: true,
      handler: (ctx, args) => {
        const title = nonEmpty(args.title, "title");
        const list = listName(args.list);
        const due = args.due_date == null ? null : isoDate(args.due_date, "due_date");
        const row = insert(ctx.db, "todos", {
          owner: ctx.user,
          title,
          list,
          due_date: due,
          done: false,
          created_at: ctx.now,
        });
        return { todo_id: row.id };
      },
    },
    {
      name: "mark_todo_done",
      description: "Mark an open to-do item as done.",
      params: [req("todo_id", "integer", "")],
      returns: "a confirmation",
      errors: ["to-do item not found", "already done"],
      mutates: true,
      handler: (ctx, args) => {
        const r = getRow(ctx.db, "todos", args.todo_id as number, "to-do item", ctx.user);
        if (r.done) throw new ApiError(`To-do item ${r.id} is already done.`);
        r.done = true;
        return "To-do item marked done.";
      },
    },
    {
      name: "update_todo",
      description: "Change a to-do item's title, due date or list; only the fields given change.",
      params: [
        req("todo_id", "integer", ""),
        opt("title", "string", ""),
        opt("due_date", "string", 'like 2026-05-14, or "none" to remove it'),
        opt("list", "string", ""),
      ],
      returns: `the updated item {${TODO_FIELDS.join(", ")}}`,
      errors: ["to-do item not found", "nothing to update", "empty title or list", "bad due_date"],
      mutates: true,
      handler: (ctx, args) => {
        const r = getRow(ctx.db, "todos", args.todo_id as number, "to-do item", ctx.user);
        if (args.title == null && args.due_date == null && args.list == null)
          throw new ApiError("Give at least one of title, due_date, list.");
        const title = args.title == null ? null : nonEmpty(args.title, "title");
        const list = args.list == null ? null : listName(args.list);
        let due: string | null | undefined;
        if (args.due_date != null)
          due = args.due_date === "none" ? null : isoDate(args.due_date, "due_date");
        if (title !== null) r.title = title;
        if (list !== null) r.list = list;
        if (due !== undefined) r.due_date = due;
        return todoView(r);
      },
    },
    deleteOwnedApi(
      "delete_todo",
      "Delete a to-do item.",
      "todos",
      "todo_id",
      "to-do item",
      () => "To-do item deleted.",
    ),
  ]),
  seed: ({ db, user, people, today, rng }) => {
    const manager = personWith(people, rng, "manager");
    const sibling = personWith(people, rng, "sibling");
    const parent = personWith(people, rng, "parent");
    const roommate = personWith(people, rng, "roommate");
    const coworker = personWith(people, rng, "coworker");
    const friends = peopleWith(people, rng, "friend", 2);
    const fr = (i: number) => friends[i] ?? roommate;
    /** The next birthday of a person on or after today. */
    const nextBirthday = (p: Person) => {
      const year = Number(today.slice(0, 4));
      let d = `${year}-${p.birthday.slice(5)}`;
      if (p.birthday.slice(5) === "02-29") d = `${year}-02-28`;
      return d < today ? `${year + 1}${d.slice(4)}` : d;
    };
    const rel0 = (n: number) => addDays(today, n);
    /** The person with the nearest birthday after today: the gift is due the day before. */
    const byNext = (a: Person, b: Person) => {
      const x = nextBirthday(a);
      const y = nextBirthday(b);
      return x < y ? -1 : x > y ? 1 : a.id - b.id;
    };
    const celebrant = people.filter((p) => nextBirthday(p) > today).sort(byNext)[0] ?? sibling;

    type Seed = [title: string, list: string, due: number | null | string, done: boolean];
    const items: Seed[] = [
      [`Send quarterly report draft to ${manager.first_name}`, "work", rng.int(2, 6), false],
      ["Book meeting room for offsite", "work", rng.int(1, 8), false],
      [`Review ${coworker.first_name}'s pull request`, "work", rng.int(-2, 1), false],
      ["Update project timeline", "work", rng.int(5, 14), false],
      ["Submit expense report", "work", rng.int(-6, -2), true],
      ["Prepare slides for all-hands", "work", null, false],
      [
        `Buy birthday gift for ${celebrant.first_name}`,
        "personal",
        addDays(nextBirthday(celebrant), -1),
        false,
      ],
      [`Call ${parent.first_name}`, "personal", rng.int(0, 3), false],
      ["Renew passport", "personal", rng.int(10, 30), false],
      ["Schedule dentist appointment", "personal", rng.int(-5, -1), false],
      [`Pay ${roommate.first_name} back for utilities`, "personal", rng.int(1, 4), false],
      [`Return book to ${fr(0).first_name}`, "personal", rng.int(-10, -4), true],
      [`Plan hike with ${fr(1).first_name}`, "personal", null, false],
      ["Buy milk and eggs", "shopping", rng.int(0, 2), false],
      ["New running shoes", "shopping", null, false],
      ["Order printer ink", "shopping", rng.int(-8, -3), true],
      ["Light bulbs for the hallway", "shopping", rng.int(3, 9), false],
      ["Fix the leaking kitchen tap", "home", rng.int(2, 7), false],
      ["Water the plants", "home", rng.int(-3, -1), true],
    ];
    for (const [title, list, due, done] of items)
      insert(db, "todos", {
        owner: user.email,
        title,
        list,
        due_date: typeof due === "number" ? rel0(due) : due,
        done,
        created_at: stampDaysAgo(today, rng, [3, 25], [7, 22]),
      });
  },
};
