import { insert } from "../db";
import { ApiError, type Json, type Person, type Row } from "../types";
import {
  type AppModule,
  addDays,
  defineApp,
  deleteOwnedApi,
  getRow,
  loginApi,
  matchesQuery,
  newestFirst,
  nonEmpty,
  opt,
  owned,
  peopleWith,
  personWith,
  pick,
  req,
  stampDaysAgo,
} from "./common";

const PREVIEW_CHARS = 40;
const LIST_FIELDS = ["note_id", "title", "preview", "tags", "pinned", "updated_at"];
const NOTE_FIELDS = ["note_id", "title", "content", "tags", "pinned", "updated_at"];

function preview(content: string): string {
  const flat = content.replace(/\s*\n\s*/g, " / ");
  return flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS - 3)}...` : flat;
}
const listView = (r: Row) =>
  pick({ ...r, note_id: r.id, preview: preview(r.content as string) }, LIST_FIELDS);
const noteView = (r: Row) => pick({ ...r, note_id: r.id }, NOTE_FIELDS);

/** Trimmed, lower-case, non-empty, distinct tags. */
function tagList(value: Json): string[] {
  const out: string[] = [];
  for (const raw of value as string[]) {
    const tag = raw.trim().toLowerCase();
    if (tag === "") throw new ApiError("tags must not be empty strings.");
    if (!out.includes(tag)) out.push(tag);
  }
  return out;
}

/** Notes: the user's notes with tags and pins. */
export const notes: AppModule = {
  spec: defineApp("notes", "Notes with titles, tags and pins: lists, logs, plans.", [
    loginApi("notes"),
    {
      name: "show_notes",
      description: `Your notes, most recently updated first, with a content preview of at most ${PREVIEW_CHARS} characters; optionally only those with a tag or whose title or content contains query.`,
      params: [
        opt("tag", "string", "only notes with this tag"),
        opt("query", "string", "text in the title or content", ""),
      ],
      returns: `[{${LIST_FIELDS.join(", ")}}]`,
      paged: true,
      handler: (ctx, args) => {
        const tag = typeof args.tag === "string" ? args.tag.trim().toLowerCase() : null;
        return newestFirst(
          owned(ctx, "notes").filter(
            (r) =>
              (!tag || (r.tags as string[]).includes(tag)) &&
              matchesQuery(r, args.query, ["title", "content"]),
          ),
          "updated_at",
        ).map(listView);
      },
    },
    {
      name: "show_note",
      description: "Show one note with its full content.",
      params: [req("note_id", "integer", "")],
      returns: `{${NOTE_FIELDS.join(", ")}}`,
      errors: ["note not found"],
      handler: (ctx, args) =>
        noteView(getRow(ctx.db, "notes", args.note_id as number, "note", ctx.user)),
    },
    {
      name: "create_note",
      description: "Create a note.",
      params: [
        req("title", "string", ""),
        req("content", "string", "lines separated by \\n"),
        opt("tags", "string[]", "", []),
      ],
      returns: '{"note_id": integer}',
      errors: ["empty title", "empty tag"],
      mutates: true,
      handler: (ctx, args) => {
        const title = nonEmpty(args.title, "title");
        const tags = tagList(args.tags);
        const row = insert(ctx.db, "notes", {
          owner: ctx.user,
          title,
          content: args.content as string,
          tags,
          pinned: false,
          updated_at: ctx.now,
        });
        return { note_id: row.id };
      },
    },
    {
      name: "update_note",
      description: "Replace a note's title, content or tags; only the fields given change.",
      params: [
        req("note_id", "integer", ""),
        opt("title", "string", ""),
        opt("content", "string", "the whole new content"),
        opt("tags", "string[]", "the whole new tag list"),
      ],
      returns: `the updated note {${NOTE_FIELDS.join(", ")}}`,
      errors: ["note not found", "nothing to update", "empty title", "empty tag"],
      mutates: true,
      handler: (ctx, args) => {
        const r = getRow(ctx.db, "notes", args.note_id as number, "note", ctx.user);
        if (args.title == null && args.content == null && args.tags == null)
          throw new ApiError("Give at least one of title, content, tags.");
        const title = args.title == null ? null : nonEmpty(args.title, "title");
        const tags = args.tags == null ? null : tagList(args.tags);
        if (title !== null) r.title = title;
        if (args.content != null) r.content = args.content as string;
        if (tags !== null) r.tags = tags;
        r.updated_at = ctx.now;
        return noteView(r);
      },
    },
    {
      name: "append_to_note",
      description: "Add text as a new line at the end of a note.",
      params: [req("note_id", "integer", ""), req("text", "string", "")],
      returns: `the updated note {${NOTE_FIELDS.join(", ")}}`,
      errors: ["note not found", "empty text"],
      mutates: true,
      handler: (ctx, args) => {
        const r = getRow(ctx.db, "notes", args.note_id as number, "note", ctx.user);
        const text = nonEmpty(args.text, "text");
        const content = r.content as string;
        r.content = content === "" ? text : `${content}\n${text}`;
        r.updated_at = ctx.now;
        return noteView(r);
      },
    },
    {
      name: "pin_note",
      description: "Pin (pinned=true) or unpin (pinned=false) a note.",
      params: [req("note_id", "integer", ""), req("pinned", "boolean", "")],
      returns: "a confirmation",
      errors: ["note not found", "already pinned or unpinned"],
      mutates: true,
      handler: (ctx, args) => {
        const r = getRow(ctx.db, "notes", args.note_id as number, "note", ctx.user);
        if (r.pinned === args.pinned)
          throw new ApiError(`Note ${r.id} is already ${r.pinned ? "pinned" : "unpinned"}.`);
        r.pinned = args.pinned as boolean;
        return args.pinned ? "Note pinned." : "Note unpinned.";
      },
    },
    deleteOwnedApi(
      "delete_note",
      "Delete a note.",
      "notes",
      "note_id",
      "note",
      () => "Note deleted.",
    ),
  ]),
  seed: ({ db, user, people, today, rng }) => {
    const manager = personWith(people, rng, "manager");
    const partner = personWith(people, rng, "partner");
    const sibling = personWith(people, rng, "sibling");
    const roommate = personWith(people, rng, "roommate");
    const coworkers = peopleWith(people, rng, "coworker", 3);
    const friends = peopleWith(people, rng, "friend", 5);
    const cw = (i: number) => coworkers[i] ?? manager;
    const fr = (i: number) => friends[i] ?? roommate;
    const name = (p: Person) => `${p.first_name} ${p.last_name}`;
    const day = (n: number) => addDays(today, -n);

    const groceries = rng.sample(
      [
        "milk",
        "eggs",
        "bread",
        "bananas",
        "spinach",
        "rice",
        "chicken",
        "coffee",
        "olive oil",
        "yogurt",
        "apples",
        "pasta",
        "tomatoes",
        "cheese",
      ],
      rng.int(5, 8),
    );
    const workouts = Array.from({ length: 6 }, (_, i) => {
      const kind = rng.pick(["run", "run", "bike", "swim"]);
      if (kind === "swim") {
        const metres = rng.int(10, 40) * 50;
        return `${day(2 + i * 3)}: swim ${metres} m, ${Math.round((metres / 100) * rng.int(2, 3))} min`;
      }
      const km = kind === "run" ? rng.int(30, 150) / 10 : rng.int(100, 450) / 10;
      const pace = kind === "run" ? rng.int(5, 7) : rng.int(2, 3);
      return `${day(2 + i * 3)}: ${kind} ${km} km, ${Math.round(km * pace)} min`;
    });
    const lifts = Array.from(
      { length: 4 },
      (_, i) =>
        `${day(1 + i * 4)}: squat ${rng.int(12, 20) * 5} kg x ${rng.int(5, 8)}, bench ${rng.int(8, 14) * 5} kg x ${rng.int(5, 8)}`,
    );
    const bookPool = [
      "Dune by Frank Herbert",
      "Circe by Madeline Miller",
      "Educated by Tara Westover",
      "Piranesi by Susanna Clarke",
      "Project Hail Mary by Andy Weir",
      "The Overstory by Richard Powers",
      "Klara and the Sun by Kazuo Ishiguro",
      "Sapiens by Yuval Noah Harari",
      "Atomic Habits by James Clear",
      "The Martian by Andy Weir",
    ];
    const books = rng.shuffle(bookPool);
    const readBooks = books.slice(0, 4).map((b) => `${b} - ${rng.int(2, 5)}/5`);
    const toRead = books.slice(4, 9);
    const tripCity = rng.pick(["Lisbon", "Kyoto", "Mexico City", "Vancouver", "Rome"]);
    const tripStart = addDays(today, rng.int(12, 40));
    const movies = rng.sample(
      [
        "Arrival",
        "Parasite",
        "Past Lives",
        "Dune: Part Two",
        "Spirited Away",
        "The Holdovers",
        "Oppenheimer",
        "Everything Everywhere All at Once",
      ],
      5,
    );
    const birthdayPeople = rng.sample(people, 6);
    const restaurants = rng.sample(
      [
        "Thai Basil",
        "Casa Oaxaca",
        "Nonna's Kitchen",
        "Ramen Ya",
        "Green Leaf Cafe",
        "The Burger Joint",
      ],
      4,
    );

    const seeds: {
      title: string;
      lines: string[];
      tags: string[];
      days: number;
      pinned?: boolean;
    }[] = [
      { title: "Grocery list", lines: groceries, tags: ["shopping"], days: 1, pinned: true },
      { title: "Running log", lines: workouts, tags: ["fitness", "log"], days: 2 },
      { title: "Gym log", lines: lifts, tags: ["fitness", "log"], days: 1 },
      { title: "Books read this year", lines: readBooks, tags: ["books"], days: 9 },
      { title: "Books to read", lines: toRead, tags: ["books", "wishlist"], days: 16 },
      {
        title: `Trip to ${tripCity}`,
        lines: [
          `Dates: ${tripStart} to ${addDays(tripStart, 5)}`,
          `Going with ${name(partner)}`,
          `Budget: $${rng.int(15, 40) * 100}`,
          `Hotel: ${rng.pick(["Hotel Central", "Riverside Inn", "Old Town Suites"])}, ${rng.int(120, 260)} per night`,
          "Book museum tickets in advance",
        ],
        tags: ["travel"],
        days: 4,
        pinned: true,
      },
      {
        title: "1:1 with manager",
        lines: [
          `Meeting with ${name(manager)} on ${day(6)}`,
          `- Q${rng.int(1, 4)} goals: ship the onboarding redesign`,
          `- Ask about budget for ${rng.pick(["a conference", "new laptops", "training"])}`,
          `- ${cw(0).first_name} joins the project next month`,
        ],
        tags: ["work", "meeting"],
        days: 6,
      },
      {
        title: "Project kickoff notes",
        lines: [
          `Attendees: ${name(cw(0))}, ${name(cw(1))}, ${name(cw(2))}`,
          `Owner of backend: ${cw(1).first_name}`,
          `Owner of design: ${cw(2).first_name}`,
          `Deadline: ${addDays(today, rng.int(20, 45))}`,
        ],
        tags: ["work", "meeting"],
        days: 11,
      },
      {
        title: "Movie watchlist",
        lines: movies,
        tags: ["movies", "wishlist"],
        days: 19,
      },
      {
        title: "Birthdays",
        lines: birthdayPeople.map((p) => `${name(p)}: ${p.birthday.slice(5)}`),
        tags: ["people"],
        days: 30,
      },
      {
        title: "Gift ideas",
        lines: [
          `${partner.first_name}: ${rng.pick(["a watch", "concert tickets", "a cooking class"])}`,
          `${sibling.first_name}: ${rng.pick(["a board game", "headphones", "a book"])}`,
          `${fr(0).first_name}: ${rng.pick(["a plant", "coffee beans", "a scarf"])}`,
        ],
        tags: ["people", "wishlist"],
        days: 13,
      },
      {
        title: "Restaurant recommendations",
        lines: restaurants.map((r, i) => `${r} (from ${fr(i).first_name})`),
        tags: ["food"],
        days: 22,
      },
      {
        title: "Apartment",
        lines: [
          `Rent: $${rng.int(110, 190) * 10} per month, split with ${roommate.first_name}`,
          `Wifi password: ${rng.pick(["sunny", "maple", "otter"])}${rng.int(100, 999)}`,
          `Landlord phone: 555-0${rng.int(100, 999)}`,
        ],
        tags: ["home"],
        days: 40,
      },
      {
        title: "Pancake recipe",
        lines: ["2 cups flour", "2 eggs", "1.5 cups milk", "2 tbsp sugar", "1 tbsp baking powder"],
        tags: ["food", "recipe"],
        days: 27,
      },
      {
        title: "Book club",
        lines: [
          `Members: ${fr(1).first_name}, ${fr(2).first_name}, ${fr(3).first_name}`,
          `Next meeting: ${addDays(today, rng.int(5, 20))} at ${fr(1).first_name}'s place`,
          `Current book: ${toRead[0]}`,
        ],
        tags: ["books", "people"],
        days: 8,
      },
      {
        title: "Monthly budget",
        lines: [
          `Groceries: ${rng.int(30, 60) * 10}`,
          `Transport: ${rng.int(8, 20) * 10}`,
          `Eating out: ${rng.int(10, 30) * 10}`,
          `Savings: ${rng.int(20, 80) * 10}`,
        ],
        tags: ["money"],
        days: 15,
      },
    ];
    for (const s of seeds)
      insert(db, "notes", {
        owner: user.email,
        title: s.title,
        content: s.lines.join("\n"),
        tags: s.tags,
        pinned: s.pinned ?? false,
        updated_at: stampDaysAgo(today, rng, s.days, [7, 22]),
      });
  },
};
