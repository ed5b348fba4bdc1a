import { addDays } from "../../apps/common";
import { insert } from "../../db";
import type { Rng } from "../../rng";
import type { World } from "../../world";
import { ScriptError } from "../actor";
import { added, updated } from "../expect";
import type { TaskTemplate } from "../types";
import { ownedRows, stampDaysAgo, variantPick } from "./helpers";

/** Templates centred on the notes and todo apps. */

// ---------------------------------------------------------------- notes

/** New notes: title, content and tag (all distinct from the seeded notes). */
const NEW_NOTES: [title: string, content: string, tag: string][] = [
  ["Packing list", "passport, charger, sunscreen, swimsuit", "travel"],
  ["Garden plan", "tomatoes along the fence, herbs by the door", "home"],
  ["Podcast ideas", "interview a local baker about sourdough", "ideas"],
  ["Car maintenance", "oil change due at 45000 km", "car"],
  ["Wedding speech", "start with the camping story", "people"],
  ["Bike route", "river path to the old mill and back, 32 km", "fitness"],
  ["Side project", "a small app to track shared groceries", "ideas"],
  ["Conference takeaways", "ship smaller changes more often", "work"],
  ["Houseplants", "water the fern twice a week", "home"],
  ["Weekend in the mountains", "cabin check-in after 4 pm", "travel"],
];

/** Notes the user appends to: title, lines, and candidate new lines. */
const APPEND_NOTES: [title: string, lines: string[], items: string[]][] = [
  [
    "Camping checklist",
    ["tent", "sleeping bags", "headlamps", "camp stove"],
    ["bug spray", "first aid kit", "water filter", "matches"],
  ],
  [
    "Party shopping",
    ["paper plates", "balloons", "lemonade", "chips"],
    ["candles", "napkins", "ice", "cake"],
  ],
  [
    "Podcasts to try",
    ["Hardcore History", "99% Invisible", "Radiolab"],
    ["Reply All", "Song Exploder", "Planet Money"],
  ],
  [
    "Housewarming guests",
    ["neighbours from 4B", "the book club", "cousins from Leeds"],
    ["the climbing group", "my old flatmates", "the team from work"],
  ],
  [
    "Questions for the landlord",
    ["When is the boiler serviced?", "Can we paint the bedroom?"],
    ["Is there a bike storage room?", "Who fixes the intercom?", "Can we get a second key?"],
  ],
  ["Baby names", ["Ada", "Theo", "Mila"], ["Rosa", "Felix", "Nora", "Otto"]],
];

/** Titles and contents for notes with a given tag (for counting). */
const TAGGED_NOTES: Record<string, [title: string, content: string][]> = {
  recipe: [
    ["Banana bread", "3 ripe bananas, 2 cups flour, 1 egg"],
    ["Chili con carne", "beans, beef, tomatoes, cumin"],
    ["Lemon pasta", "spaghetti, lemon zest, parmesan, butter"],
    ["Shakshuka", "eggs poached in spiced tomato sauce"],
    ["Overnight oats", "oats, milk, chia seeds, berries"],
    ["Guacamole", "avocados, lime, red onion, cilantro"],
    ["Tomato soup", "roast the tomatoes first"],
    ["Granola", "oats, honey, almonds, bake 25 min"],
    ["Fried rice", "day-old rice, peas, soy sauce, egg"],
    ["Pesto", "basil, pine nuts, garlic, olive oil"],
  ],
  ideas: [
    ["App idea", "split chores between roommates"],
    ["Blog post topics", "what I learned from a year of running"],
    ["Gift shop concept", "local crafts and coffee"],
    ["Board game", "co-op game about running a bakery"],
    ["Photo project", "one picture of the same tree every week"],
    ["Workshop", "teach basic bike repair"],
    ["Short story", "a lighthouse keeper who collects letters"],
    ["Newsletter", "monthly roundup of cheap eats"],
    ["Balcony garden", "vertical planters for herbs"],
    ["YouTube channel", "slow travel by train"],
  ],
  travel: [
    ["Lisbon tips", "take tram 28 early in the morning"],
    ["Train passes", "compare the regional and the national pass"],
    ["Visa notes", "apply at least six weeks before"],
    ["Road trip stops", "lake viewpoint, cheese farm, old bridge"],
    ["Hostel list", "two options near the central station"],
    ["Travel insurance", "policy number in the email from March"],
    ["Airport lounges", "card gives two free visits a year"],
    ["Kyoto temples", "go to Fushimi Inari at sunrise"],
    ["Ferry times", "first ferry 7:10, last ferry 21:40"],
    ["Packing tips", "roll clothes, pack a spare charger"],
  ],
  work: [
    ["Sprint retro", "fewer meetings on Wednesdays"],
    ["Hiring plan", "one backend and one designer this quarter"],
    ["Onboarding checklist", "laptop, accounts, buddy, first task"],
    ["Quarterly goals", "cut page load time in half"],
    ["Team offsite", "venue options and a rough agenda"],
    ["Vendor contacts", "ask for the new price list"],
    ["Roadmap draft", "search first, then reporting"],
    ["Interview questions", "ask about a project they are proud of"],
    ["Incident review", "add an alert for disk space"],
    ["Budget request", "two new monitors for the design team"],
  ],
  health: [
    ["Doctor visit", "ask about the knee and the blood test"],
    ["Stretching routine", "hamstrings, hips, shoulders, 10 min"],
    ["Sleep log", "in bed by 23:00 five days out of seven"],
    ["Vitamins", "vitamin D in winter"],
    ["Allergies", "pollen season starts in April"],
    ["Physio exercises", "three sets of calf raises"],
    ["Meal plan", "more beans, less takeout"],
    ["Dentist", "cleaning every six months"],
    ["Eye test", "new glasses prescription"],
    ["Step goal", "8000 steps, walk to work on Fridays"],
  ],
};

/** A note whose text mentions the tag without having it: searching by text overcounts. */
function addTagDecoy(world: World, rng: Rng, tag: string): void {
  insert(world.db, "notes", {
    owner: world.user.email,
    title: `Old ${tag} stuff to sort`,
    content: `Move the ${tag} notes into one place`,
    tags: ["misc"],
    pinned: false,
    updated_at: stampDaysAgo(world, rng, rng.int(1, 60), [7, 22]),
  });
}

/** Create a note with a title, content and one tag. */
export const notesCreate: TaskTemplate = {
  id: "notes_create",
  difficulty: 1,
  apps: ["notes"],
  build(world, _rng, variant) {
    const existing = new Set(ownedRows(world, "notes").map((n) => n.title as string));
    const free = NEW_NOTES.filter(([t]) => !existing.has(t));
    const [title, content, tag] = variantPick(world, free, variant, "notes_create");
    return {
      instruction: `Create a note titled '${title}' with the content '${content}' and the tag '${tag}'.`,
      params: { title, content, tag },
      expect: {
        changes: [
          added(
            `note '${title}' tagged ${tag}`,
            "notes",
            (r) =>
              r.owner === world.user.email &&
              r.title === title &&
              r.content === content &&
              Array.isArray(r.tags) &&
              r.tags.length === 1 &&
              r.tags[0] === tag &&
              r.pinned === false,
          ),
        ],
      },
    };
  },
  *solve(a, p) {
    const token = yield* a.login("notes");
    yield* a.call("notes", "create_note", {
      access_token: token,
      title: p.title,
      content: p.content,
      tags: [p.tag as string],
    });
    yield* a.finish();
  },
};

/** Append a line to a note found by its (unique) title. */
export const notesAppend: TaskTemplate = {
  id: "notes_append",
  difficulty: 1,
  apps: ["notes"],
  build(world, rng, variant) {
    const [title, lines, items] = variantPick(world, APPEND_NOTES, variant, "notes_append");
    const item = rng.pick(items);
    const content = rng.shuffle(lines).join("\n");
    const note = insert(world.db, "notes", {
      owner: world.user.email,
      title,
      content,
      tags: ["lists"],
      pinned: false,
      updated_at: stampDaysAgo(world, rng, rng.int(3, 60), [7, 22]),
    });
    const want = `${content}\n${item}`;
    return {
      instruction: `Add '${item}' as a new line to my note '${title}'.`,
      params: { item, title },
      expect: {
        changes: [
          updated(`'${item}' added to '${title}'`, "notes", note.id, (r) => r.content === want, [
            "content",
            "updated_at",
          ]),
        ],
      },
    };
  },
  *solve(a, p) {
    const title = (p.title as string).toLowerCase();
    const token = yield* a.login("notes");
    const found = yield* a.pages("notes", "show_notes", { access_token: token, query: p.title });
    const note = found.find((n) => String(n.title).toLowerCase() === title);
    if (!note) throw new ScriptError(`no note titled ${p.title}`);
    yield* a.call("notes", "append_to_note", {
      access_token: token,
      note_id: note.note_id ?? null,
      text: p.item,
    });
    yield* a.finish();
  },
};

/** Count the notes with a tag: more than one page for most variants, plus a text-only decoy. */
export const notesCountTag: TaskTemplate = {
  id: "notes_count_tag",
  difficulty: 2,
  apps: ["notes"],
  build(world, rng, variant) {
    const tag = variantPick(world, Object.keys(TAGGED_NOTES), variant, "notes_count_tag");
    const has = () => ownedRows(world, "notes").filter((n) => (n.tags as string[]).includes(tag));
    const target = variant === 2 ? rng.int(3, 5) : rng.int(6, 10);
    const existing = new Set(ownedRows(world, "notes").map((n) => n.title as string));
    const pool = rng.shuffle((TAGGED_NOTES[tag] ?? []).filter(([t]) => !existing.has(t)));
    const others = rng.sample(["log", "wishlist", "people", "money", "home"], 2);
    for (const [title, content] of pool.slice(0, Math.max(0, target - has().length)))
      insert(world.db, "notes", {
        owner: world.user.email,
        title,
        content,
        tags: rng.chance(0.4) ? [tag, rng.pick(others)] : [tag],
        pinned: rng.chance(0.15),
        updated_at: stampDaysAgo(world, rng, rng.int(1, 90), [7, 22]),
      });
    addTagDecoy(world, rng, tag);
    return {
      instruction: `How many of my notes are tagged '${tag}'? Answer with a number.`,
      params: { tag },
      expect: { changes: [], answer: has().length },
    };
  },
  *solve(a, p) {
    const token = yield* a.login("notes");
    const found = yield* a.pages("notes", "show_notes", { access_token: token, tag: p.tag });
    yield* a.finish(found.length);
  },
};

// ---------------------------------------------------------------- todo

const LISTS = ["personal", "work", "shopping", "home"];

/** Todo titles per list that the seed never uses. */
const TODO_TITLES: Record<string, string[]> = {
  personal: [
    "Renew library card",
    "Book a haircut",
    "Send thank-you cards",
    "Cancel the gym trial",
    "Update emergency contacts",
    "Back up phone photos",
    "Sign up for the 10k race",
    "Return the rental skis",
    "Reply to the wedding invitation",
    "Check car insurance renewal",
    "Frame the holiday photos",
    "Donate old clothes",
  ],
  work: [
    "Write release notes",
    "Clean up the shared drive",
    "Fill in the security training",
    "Plan the sprint demo",
    "Review the vendor contract",
    "Answer the customer survey",
    "Archive old project channels",
    "Draft the hiring post",
    "Update the on-call schedule",
    "Prepare the budget forecast",
    "Set up the test environment",
    "Book travel for the conference",
  ],
  shopping: [
    "Dish soap",
    "Birthday card",
    "AA batteries",
    "Coffee filters",
    "Shampoo",
    "Rain jacket",
    "Printer paper",
    "Dog food",
    "Sunscreen",
    "Trash bags",
    "Olive oil",
    "Phone charger",
  ],
  home: [
    "Clean the gutters",
    "Replace the smoke alarm battery",
    "Descale the kettle",
    "Fix the wobbly chair",
    "Vacuum the car",
    "Defrost the freezer",
    "Paint the fence",
    "Wash the curtains",
    "Oil the squeaky door",
    "Sort the garage",
    "Bleed the radiators",
    "Change the bed sheets",
  ],
};

/** Adds a todo to the user's list; `due` is days from today, or null. */
function addTodo(
  world: World,
  rng: Rng,
  title: string,
  list: string,
  due: number | null,
  done: boolean,
) {
  return insert(world.db, "todos", {
    owner: world.user.email,
    title,
    list,
    due_date: due === null ? null : addDays(world.today, due),
    done,
    created_at: stampDaysAgo(world, rng, rng.int(20, 40), [7, 22]),
  });
}

/** Add a todo with a title, due date and list. */
export const todoCreate: TaskTemplate = {
  id: "todo_create",
  difficulty: 1,
  apps: ["todo"],
  build(world, rng, variant) {
    const list = variantPick(world, LISTS, variant, "todo_create");
    const title = rng.pick(TODO_TITLES[list] ?? []);
    const due = addDays(world.today, rng.int(1, 30));
    return {
      instruction: `Add a todo '${title}' due ${due} to my ${list} list.`,
      params: { title, due, list },
      expect: {
        changes: [
          added(
            `todo '${title}' due ${due} in ${list}`,
            "todos",
            (r) =>
              r.owner === world.user.email &&
              r.title === title &&
              r.list === list &&
              r.due_date === due &&
              r.done === false,
          ),
        ],
      },
    };
  },
  *solve(a, p) {
    const token = yield* a.login("todo");
    yield* a.call("todo", "create_todo", {
      access_token: token,
      title: p.title,
      list: p.list,
      due_date: p.due,
    });
    yield* a.finish();
  },
};

/**
 * Mark done the open overdue todos of a list: a date condition over several pages (one todo due
 * today, open ones due later, and done overdue ones must stay as they are).
 */
export const todoOverdueDone: TaskTemplate = {
  id: "todo_overdue_done",
  difficulty: 3,
  apps: ["todo"],
  build(world, rng, variant) {
    const list = variantPick(world, LISTS, variant, "todo_overdue_done");
    const overdue = () =>
      ownedRows(world, "todos").filter(
        (t) => t.list === list && !t.done && t.due_date !== null && t.due_date < world.today,
      );
    const titles = rng.shuffle(TODO_TITLES[list] ?? []);
    const next = () => titles.pop() as string;
    const target = variant === 2 ? rng.int(3, 5) : rng.int(6, 7);
    const missing = Math.max(0, target - overdue().length);
    const pastDays = rng.sample(
      Array.from({ length: 25 }, (_, i) => -(i + 1)),
      missing + 2,
    );
    for (let i = 0; i < missing; i++) addTodo(world, rng, next(), list, pastDays[i] ?? -1, false);
    for (let i = missing; i < pastDays.length; i++)
      addTodo(world, rng, next(), list, pastDays[i] ?? -1, true);
    addTodo(world, rng, next(), list, 0, false);
    for (let i = rng.int(1, 2); i > 0; i--)
      addTodo(world, rng, next(), list, rng.int(1, 20), false);
    const todo = overdue();
    return {
      instruction: `Mark as done every open todo in my ${list} list that was due before today.`,
      params: { list },
      expect: {
        changes: todo.map((t) =>
          updated(`'${t.title}' marked done`, "todos", t.id, (r) => r.done === true, ["done"]),
        ),
      },
    };
  },
  *solve(a, p) {
    const today = a.today;
    const token = yield* a.login("todo");
    const open = yield* a.pages("todo", "show_todos", {
      access_token: token,
      list: p.list,
      done: false,
    });
    for (const t of open)
      if (typeof t.due_date === "string" && t.due_date < today)
        yield* a.call("todo", "mark_todo_done", {
          access_token: token,
          todo_id: t.todo_id ?? null,
        });
    yield* a.finish();
  },
};

/** Count the open todos of a list (more than a page for most variants; done ones are decoys). */
export const todoCountOpen: TaskTemplate = {
  id: "todo_count_open",
  difficulty: 2,
  apps: ["todo"],
  build(world, rng, variant) {
    const list = variantPick(world, LISTS, variant, "todo_count_open");
    const open = () => ownedRows(world, "todos").filter((t) => t.list === list && !t.done);
    const titles = rng.shuffle(TODO_TITLES[list] ?? []);
    const target = Math.max(open().length + 1, variant === 2 ? rng.int(3, 5) : rng.int(6, 9));
    while (open().length < target) {
      const due = rng.chance(0.2) ? null : rng.int(-10, 25);
      addTodo(world, rng, titles.pop() as string, list, due, false);
    }
    for (let i = rng.int(1, 3); i > 0; i--)
      addTodo(world, rng, titles.pop() as string, list, rng.int(-20, -1), true);
    return {
      instruction: `How many open todos do I have in my ${list} list? Answer with a number.`,
      params: { list },
      expect: { changes: [], answer: open().length },
    };
  },
  *solve(a, p) {
    const token = yield* a.login("todo");
    const open = yield* a.pages("todo", "show_todos", {
      access_token: token,
      list: p.list,
      done: false,
    });
    yield* a.finish(open.length);
  },
};

export const PRODUCTIVITY_TEMPLATES: TaskTemplate[] = [
  notesCreate,
  notesAppend,
  notesCountTag,
  todoCreate,
  todoOverdueDone,
  todoCountOpen,
];
