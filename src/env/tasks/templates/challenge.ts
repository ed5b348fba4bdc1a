import { addDays } from "../../apps/common";
import { deliver } from "../../apps/mail";
import { findRow, insert, table } from "../../db";
import type { Rng } from "../../rng";
import type { Json, JsonObject, Person, Row } from "../../types";
import type { World } from "../../world";
import { type Act, type Actor, ScriptError } from "../actor";
import { added, allowUpdates, sameAmount } from "../expect";
import type { TaskTemplate } from "../types";
import {
  accountIds,
  contactEmail,
  dollars,
  findContact,
  fullName,
  ownedRows,
  scenarioRng,
  sentMoney,
  stampDaysAgo,
  variantPick,
} from "./helpers";

/**
 * Challenge templates (test_challenge only): the splitbill app, which no training template uses,
 * and app combinations that training templates do not have.
 */

// ---------------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------------

/**
 * Whether the apps accept the amount: their check (round(n * 100) === n * 100) rejects about 9% of
 * two-decimal amounts because of float error (e.g. 64.6), so tasks use only amounts it accepts.
 */
function payable(n: number): boolean {
  return Math.round(n * 100) === n * 100;
}

/** A payable amount between lo and hi cents. */
function payableAmount(rng: Rng, lo: number, hi: number): number {
  for (;;) {
    const n = rng.int(lo, hi) / 100;
    if (payable(n)) return n;
  }
}

/** The same strings, in any order. */
function sameSet(value: Json | undefined, want: string[]): boolean {
  if (!Array.isArray(value) || value.length !== want.length) return false;
  return want.every((w) => value.includes(w)) && new Set(value).size === value.length;
}

// ---------------------------------------------------------------------------------------------
// Splitbill
// ---------------------------------------------------------------------------------------------

const FILLER_GROUPS = ["Book club", "Game night", "Soccer team", "Wedding gift", "Family reunion"];
const TARGET_GROUPS = [
  "Ski weekend",
  "Camping trip",
  "Beach house",
  "Road trip",
  "Birthday dinner",
];
const EXPENSE_WORDS = [
  "snacks",
  "tickets",
  "taxi",
  "dinner",
  "drinks",
  "gas",
  "groceries",
  "supplies",
  "parking",
  "breakfast",
];

function userGroups(world: World): Row[] {
  return table(world.db, "split_groups").filter((g) =>
    (g.members as string[]).includes(world.user.email),
  );
}

function addExpense(
  world: World,
  rng: Rng,
  group: Row,
  payer: string,
  among: string[],
  cents: number,
): void {
  insert(world.db, "expenses", {
    group_id: group.id,
    payer,
    amount: cents / 100,
    description: rng.pick(EXPENSE_WORDS),
    split_among: among.slice(),
    created_at: stampDaysAgo(world, rng, rng.int(1, 40), [8, 21]),
  });
}

/** An expense whose amount splits evenly (in cents) among `among`. */
function addEvenExpense(world: World, rng: Rng, group: Row, payer: string, among: string[]): void {
  addExpense(world, rng, group, payer, among, rng.int(600, 3000) * among.length);
}

/** A new group of the user and `n` random people. */
function addGroup(world: World, rng: Rng, name: string, n: number): Row {
  const others = rng.sample(world.people, n).map((p) => p.email);
  return insert(world.db, "split_groups", { name, members: [world.user.email, ...others] });
}

/** Groups the user is in besides the seeded ones, with a few evenly split expenses each. */
function addFillerGroups(world: World, rng: Rng, count: number): void {
  for (const name of rng.sample(FILLER_GROUPS, count)) {
    const g = addGroup(world, rng, name, rng.int(2, 4));
    const members = g.members as string[];
    for (let i = rng.int(2, 5); i > 0; i--)
      addEvenExpense(world, rng, g, rng.pick(members), members);
  }
}

/** Each member's net balance, computed exactly as splitbill.show_balances does. */
function groupBalances(world: World, group: Row): Map<string, number> {
  const net = new Map((group.members as string[]).map((m) => [m, 0]));
  for (const e of table(world.db, "expenses").filter((x) => x.group_id === group.id)) {
    const among = e.split_among as string[];
    const amount = e.amount as number;
    const payer = e.payer as string;
    net.set(payer, (net.get(payer) ?? 0) + amount);
    for (const m of among) net.set(m, (net.get(m) ?? 0) - amount / among.length);
  }
  return new Map([...net].map(([m, b]) => [m, Math.round(b * 100) / 100 || 0]));
}

function personByEmail(world: World, email: string): Person {
  const p = world.people.find((x) => x.email === email);
  if (!p) throw new Error(`no person ${email}`);
  return p;
}

/** Finds one of the user's groups by name (all pages); returns the token and the group id. */
function* findGroup(a: Actor, name: string): Act<{ token: string; id: number }> {
  const token = yield* a.login("splitbill");
  const groups = yield* a.pages("splitbill", "show_groups", { access_token: token });
  const hit = groups.find((g) => String(g.name).toLowerCase() === name.toLowerCase());
  if (!hit) throw new ScriptError(`no group named ${name}`);
  return { token, id: hit.group_id as number };
}

const EXPENSE_ITEMS = [
  "concert tickets",
  "taxi to the airport",
  "board games",
  "museum tickets",
  "firewood",
  "bike rental",
  "pizza delivery",
  "boat tickets",
];

/** Adds an expense the user paid to a group, split among all its members. */
const splitbillAddExpense: TaskTemplate = {
  id: "splitbill_add_expense",
  difficulty: 1,
  apps: ["splitbill"],
  challenge: true,
  build(world, rng, variant) {
    const srng = scenarioRng(world, "challenge/splitbill_add_expense/world");
    addFillerGroups(world, srng, srng.int(2, 3));
    const group = variantPick(world, userGroups(world), variant, "challenge/add_expense/group");
    const members = group.members as string[];
    const amount = rng.chance(0.5) ? rng.int(20, 240) : payableAmount(rng, 2000, 24000);
    const description = variantPick(world, EXPENSE_ITEMS, variant, "challenge/add_expense/item");
    const name = group.name as string;
    return {
      instruction: `Add an expense of $${dollars(amount)} for '${description}' to my splitbill group '${name}', split among all members.`,
      params: { group: name, amount, description },
      expect: {
        changes: [
          added(
            `expense of ${amount} for "${description}" in group ${group.id}, split among all`,
            "expenses",
            (r) =>
              r.group_id === group.id &&
              r.payer === world.user.email &&
              sameAmount(r.amount, amount) &&
              r.description === description &&
              sameSet(r.split_among, members),
          ),
        ],
      },
    };
  },
  *solve(a, p) {
    const { token, id } = yield* findGroup(a, p.group as string);
    yield* a.call("splitbill", "add_expense", {
      access_token: token,
      group_id: id,
      amount: p.amount,
      description: p.description,
    });
    yield* a.finish();
  },
};

/** Makes `email` owe money in the group, adding expenses others paid for everyone if needed. */
function makeOwe(world: World, rng: Rng, group: Row, email: string): number {
  const members = group.members as string[];
  const payers = members.filter((m) => m !== email);
  let balance = groupBalances(world, group).get(email) ?? 0;
  while (balance > -5) {
    addEvenExpense(world, rng, group, rng.pick(payers), members);
    balance = groupBalances(world, group).get(email) ?? 0;
  }
  return -balance;
}

/** Reads how much a named member owes in a group from its balances. */
const splitbillOwedBy: TaskTemplate = {
  id: "splitbill_owed_by",
  difficulty: 2,
  apps: ["splitbill", "phone"],
  challenge: true,
  build(world, rng, variant) {
    const srng = scenarioRng(world, "challenge/splitbill_owed_by/world");
    addFillerGroups(world, srng, srng.int(2, 3));
    const group = variantPick(world, userGroups(world), variant, "challenge/owed_by/group");
    const others = (group.members as string[]).filter((m) => m !== world.user.email);
    const email = rng.pick(others);
    const owed = makeOwe(world, rng, group, email);
    const name = fullName(personByEmail(world, email));
    const groupName = group.name as string;
    return {
      instruction: `According to the balances of my splitbill group '${groupName}', how much does ${name} owe? Answer with the amount as a positive number.`,
      params: { name, group: groupName },
      expect: { changes: [], answer: owed },
    };
  },
  *solve(a, p) {
    const { token, id } = yield* findGroup(a, p.group as string);
    const balances = (yield* a.call("splitbill", "show_balances", {
      access_token: token,
      group_id: id,
    })) as JsonObject[];
    const email = yield* contactEmail(a, p.name as string);
    const row = balances.find((b) => b.email === email);
    if (!row) throw new ScriptError(`${email} is not in the group`);
    yield* a.finish(Math.abs(row.balance as number));
  },
};

/**
 * A new group where only the user owes: `owed` members end with a positive balance, the rest
 * with exactly zero. Every expense splits evenly in cents.
 */
function buildSettleGroup(world: World, rng: Rng, name: string): Row {
  const group = addGroup(world, rng, name, rng.int(3, 4));
  const me = world.user.email;
  const members = group.members as string[];
  const others = members.filter((m) => m !== me);
  const owedCount = rng.int(1, others.length - 1);
  for (let i = rng.int(3, 5); i > 0; i--) {
    const among = rng.chance(0.6) ? members : rng.sample(members, rng.int(2, members.length - 1));
    addEvenExpense(world, rng, group, rng.pick(members), among);
  }
  const cents = (m: string) => Math.round((groupBalances(world, group).get(m) ?? 0) * 100);
  others.forEach((m, i) => {
    const b = cents(m);
    if (i < owedCount) {
      if (b < 500) addExpense(world, rng, group, m, [m, me], 2 * (500 - b + rng.int(500, 3000)));
    } else if (b > 0) addExpense(world, rng, group, me, [me, m], 2 * b);
    else if (b < 0) addExpense(world, rng, group, m, [m, me], -2 * b);
  });
  // What the user will send must be an amount pay accepts.
  for (const m of others.slice(0, owedCount))
    while (!payable(groupBalances(world, group).get(m) ?? 0))
      addExpense(world, rng, group, m, [m, me], 2 * rng.int(100, 600));
  return group;
}

/** Pays, on pay, every member a splitbill group's balances show as owed. */
const splitbillSettlePay: TaskTemplate = {
  id: "splitbill_settle_pay",
  difficulty: 3,
  apps: ["splitbill", "pay"],
  challenge: true,
  build(world, rng, variant) {
    const srng = scenarioRng(world, "challenge/splitbill_settle_pay/world");
    addFillerGroups(world, srng, srng.int(1, 3));
    const name = variantPick(world, TARGET_GROUPS, variant, "challenge/settle/group");
    const group = buildSettleGroup(world, rng, name);
    const balances = groupBalances(world, group);
    const owed = [...balances].filter(([, b]) => b > 0);
    if (owed.length === 0 || (balances.get(world.user.email) ?? 0) >= 0)
      throw new Error("settle group without debts");
    const note = `settle ${name}`;
    const me = findRow(world.db, "pay_accounts", (r) => r.email === world.user.email);
    const total = owed.reduce((s, [, b]) => s + b, 0);
    if (me && (me.balance as number) < total + 50) me.balance = Math.ceil(total) + 200;
    const ids = accountIds(
      world,
      owed.map(([email]) => email),
    );
    return {
      instruction: `Settle up my splitbill group '${name}': on pay, send each member whom the group's balances show as owed money (a positive balance) exactly that amount, with the note '${note}'.`,
      params: { group: name, note },
      expect: {
        changes: owed.map(([email, amount]) => sentMoney(world, email, amount, note, `${amount}`)),
        allow: allowUpdates("pay_accounts", [me?.id ?? -1, ...ids], ["balance"]),
      },
    };
  },
  *solve(a, p) {
    const { token, id } = yield* findGroup(a, p.group as string);
    const balances = (yield* a.call("splitbill", "show_balances", {
      access_token: token,
      group_id: id,
    })) as JsonObject[];
    const owed = balances.filter((b) => (b.balance as number) > 0);
    const payToken = yield* a.login("pay");
    for (const b of owed)
      yield* a.call("pay", "send_money", {
        access_token: payToken,
        receiver_email: b.email,
        amount: b.balance,
        note: p.note,
      });
    yield* a.finish();
  },
};

// ---------------------------------------------------------------------------------------------
// Mail to notes
// ---------------------------------------------------------------------------------------------

type MailSpec = { title: string; subject: string; body: (rng: Rng, to: Person) => string };

const SAVED_MAILS: MailSpec[] = [
  {
    title: "Gate code",
    subject: "Getting in on Saturday",
    body: (rng, to) =>
      `Hi ${to.first_name}, the gate code is ${rng.int(1000, 9999)}.\nPark behind the blue door and take the stairs to floor ${rng.int(2, 9)}.`,
  },
  {
    title: "Cabin wifi",
    subject: "Wifi at the cabin",
    body: (rng) =>
      `The cabin wifi is "pinecone-${rng.int(10, 99)}" and the password is maple${rng.int(1000, 9999)}.\nIt resets every Monday.`,
  },
  {
    title: "Soup recipe",
    subject: "That soup recipe",
    body: (rng) =>
      `Lentil soup: ${rng.int(2, 4)} cups lentils, ${rng.int(1, 3)} onions, ${rng.int(2, 5)} carrots, ${rng.int(5, 8)} cups broth.\nSimmer for ${rng.int(25, 50)} minutes.`,
  },
  {
    title: "Car pickup",
    subject: "Your car is ready",
    body: (rng) =>
      `Your car is ready at AutoCare Garage, bay ${rng.int(1, 12)}.\nThe total is $${rng.int(120, 480)}; pick it up before ${rng.int(5, 7)}pm.`,
  },
  {
    title: "Packing list",
    subject: "What to bring",
    body: (rng) =>
      `Bring ${rng.int(2, 4)} warm layers, a headlamp and ${rng.int(2, 3)} liters of water.\nWe leave at ${rng.int(6, 8)}:30 sharp.`,
  },
];

const OLDER_MAILS: [string, string][] = [
  ["Quick question", "Do you still have my umbrella? No rush."],
  ["Photos", "Here are the photos from last weekend. The one by the lake is my favorite."],
  ["Catching up", "It's been a while! Coffee next week?"],
  ["Thanks", "Thanks again for your help with the move."],
];

/** Saves the body of the latest email from a contact as a note. */
const notesFromMail: TaskTemplate = {
  id: "notes_from_mail",
  difficulty: 2,
  apps: ["mail", "notes"],
  challenge: true,
  build(world, rng, variant) {
    const person = variantPick(world, world.people, variant, "challenge/notes_from_mail/person");
    const spec = variantPick(world, SAVED_MAILS, variant, "challenge/notes_from_mail/mail");
    const me = world.user.email;
    const days = rng.sample([2, 3, 4, 5, 6, 8, 10], rng.int(1, 3));
    for (const d of days) {
      const [subject, body] = rng.pick(OLDER_MAILS);
      deliver(world.db, person.email, [me], subject, body, stampDaysAgo(world, rng, d, [8, 21]));
    }
    // Today before 9:00 (the episode's clock starts at 9:00): later than any seeded email.
    const body = spec.body(rng, world.user);
    deliver(world.db, person.email, [me], spec.subject, body, stampDaysAgo(world, rng, 0, [6, 8]));
    const name = fullName(person);
    return {
      instruction: `Save the body of the latest email from ${name} as a note titled '${spec.title}'.`,
      params: { name, title: spec.title },
      expect: {
        changes: [
          added(`note "${spec.title}" with the email's body`, "notes", (r) => {
            const tags = r.tags as Json[];
            return (
              r.owner === world.user.email &&
              r.title === spec.title &&
              r.content === body &&
              Array.isArray(tags) &&
              tags.length === 0 &&
              r.pinned === false
            );
          }),
        ],
      },
    };
  },
  *solve(a, p) {
    const email = yield* contactEmail(a, p.name as string);
    const token = yield* a.login("mail");
    const inbox = (yield* a.call("mail", "show_inbox", {
      access_token: token,
      query: email,
    })) as JsonObject[];
    const latest = inbox.find((m) => m.sender === email);
    if (!latest) throw new ScriptError(`no email from ${email}`);
    const full = (yield* a.call("mail", "show_email", {
      access_token: token,
      email_id: latest.email_id,
    })) as JsonObject;
    const notesToken = yield* a.login("notes");
    yield* a.call("notes", "create_note", {
      access_token: notesToken,
      title: p.title,
      content: full.body,
    });
    yield* a.finish();
  },
};

// ---------------------------------------------------------------------------------------------
// Calendar
// ---------------------------------------------------------------------------------------------

const EXTRA_EVENTS: [title: string, location: string, duration: number][] = [
  ["Haircut", "Main Street Barbers", 30],
  ["Piano lesson", "Music School", 45],
  ["Doctor appointment", "City Clinic", 30],
  ["Team lunch", "Noodle Bar", 60],
  ["Client call", "Phone", 30],
  ["Design review", "Conference room B", 60],
  ["Volunteer shift", "Food Bank", 120],
  ["Tennis match", "Riverside Courts", 90],
  ["Parent-teacher meeting", "Lincoln School", 30],
  ["Grocery pickup", "Green Grocer", 15],
  ["Budget planning", "Home office", 45],
  ["Language class", "Community Center", 90],
  ["Vet appointment", "Happy Paws Clinic", 30],
  ["Plumber visit", "Home", 60],
  ["Bank appointment", "First Bank", 30],
];
const STARTS = Array.from({ length: 27 }, (_, i) => {
  const minutes = 7 * 60 + i * 30;
  return `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${minutes % 60 === 0 ? "00" : "30"}`;
});

function eventsOn(world: World, date: string): Row[] {
  return ownedRows(world, "events").filter((e) => e.date === date);
}

/** Adds `n` events from the pool on `date`, with titles and start times not used that day. */
function addEvents(world: World, rng: Rng, date: string, n: number): void {
  const day = eventsOn(world, date);
  const titles = new Set(day.map((e) => e.title as string));
  const starts = new Set(day.map((e) => e.start as string));
  const pool = rng.shuffle(EXTRA_EVENTS.filter(([t]) => !titles.has(t)));
  const free = rng.shuffle(STARTS.filter((s) => !starts.has(s)));
  for (const [title, location, duration_min] of pool.slice(0, Math.max(0, n)))
    insert(world.db, "events", {
      owner: world.user.email,
      title,
      date,
      start: free.pop() as string,
      duration_min,
      attendees: [],
      location,
    });
}

/** Busy neighbouring days, so that the date matters. */
function addNeighbours(world: World, rng: Rng, date: string): void {
  addEvents(world, rng, addDays(date, -1), rng.int(1, 3));
  addEvents(world, rng, addDays(date, 1), rng.int(1, 3));
}

/** A date for the variant (distinct per variant) with at most `max` events and distinct titles. */
function pickDate(world: World, rng: Rng, variant: number, max: number): string {
  const offsets = rng.shuffle([0, 1, 2, 3, 4, 5].map((i) => 1 + variant * 6 + i));
  for (const off of offsets) {
    const date = addDays(world.today, off);
    const day = eventsOn(world, date);
    if (day.length <= max && new Set(day.map((e) => e.title)).size === day.length) return date;
  }
  return addDays(world.today, 30 + variant);
}

/** A todo for each event on a given day. */
const todoFromCalendar: TaskTemplate = {
  id: "todo_from_calendar",
  difficulty: 3,
  apps: ["calendar", "todo"],
  challenge: true,
  build(world, rng, variant) {
    const date = pickDate(world, rng, variant, 2);
    const want = rng.int(2, 3);
    addEvents(world, rng, date, want - eventsOn(world, date).length);
    addNeighbours(world, rng, date);
    const titles = eventsOn(world, date).map((e) => `Prepare: ${e.title}`);
    return {
      instruction: `For each event on my calendar on ${date}, add a todo to my personal list titled 'Prepare: <event title>' due that day.`,
      params: { date },
      expect: {
        changes: titles.map((title) =>
          added(`todo "${title}" due ${date} in personal`, "todos", (r) => {
            return (
              r.owner === world.user.email &&
              r.title === title &&
              r.list === "personal" &&
              r.due_date === date &&
              r.done === false
            );
          }),
        ),
      },
    };
  },
  *solve(a, p) {
    const token = yield* a.login("calendar");
    const events = yield* a.pages("calendar", "show_events", { access_token: token, date: p.date });
    const todoToken = yield* a.login("todo");
    for (const e of events)
      yield* a.call("todo", "create_todo", {
        access_token: todoToken,
        title: `Prepare: ${e.title}`,
        list: "personal",
        due_date: p.date,
      });
    yield* a.finish();
  },
};

/** Counts the events on one day. */
const calendarCountDay: TaskTemplate = {
  id: "calendar_count_day",
  difficulty: 1,
  apps: ["calendar"],
  challenge: true,
  build(world, rng, variant) {
    const date = pickDate(world, rng, variant, 3);
    const want = rng.int(3, 7);
    addEvents(world, rng, date, want - eventsOn(world, date).length);
    addNeighbours(world, rng, date);
    const count = eventsOn(world, date).length;
    return {
      instruction: `How many events do I have on ${date}? Answer with a number.`,
      params: { date },
      expect: { changes: [], answer: count },
    };
  },
  *solve(a, p) {
    const token = yield* a.login("calendar");
    const events = yield* a.pages("calendar", "show_events", { access_token: token, date: p.date });
    yield* a.finish(events.length);
  },
};

// ---------------------------------------------------------------------------------------------
// Music to phone, files to mail
// ---------------------------------------------------------------------------------------------

const TARGET_PLAYLISTS = ["Gym Mix", "Study Beats", "Summer Nights", "Late Night Drive"];
const FILLER_PLAYLISTS = ["Kitchen Dance", "Old Favorites", "Rainy Commute"];

function addPlaylist(world: World, rng: Rng, title: string, songs: number): Row {
  const ids = rng.sample(
    table(world.db, "songs").map((s) => s.id),
    songs,
  );
  return insert(world.db, "playlists", {
    owner: world.user.email,
    title,
    song_ids: ids,
    created_at: stampDaysAgo(world, rng, rng.int(3, 230), [8, 21]),
  });
}

/** Texts a contact the song titles of a playlist, in order. */
const musicPlaylistText: TaskTemplate = {
  id: "music_playlist_text",
  difficulty: 2,
  apps: ["music", "phone"],
  challenge: true,
  build(world, rng, variant) {
    const title = variantPick(
      world,
      TARGET_PLAYLISTS,
      variant,
      "challenge/music_playlist_text/title",
    );
    addPlaylist(world, rng, rng.pick(FILLER_PLAYLISTS), rng.int(3, 7));
    const playlist = addPlaylist(world, rng, title, rng.int(4, 6));
    const songs = table(world.db, "songs");
    const message = (playlist.song_ids as number[])
      .map((id) => songs.find((s) => s.id === id)?.title as string)
      .join(", ");
    const person = variantPick(
      world,
      world.people,
      variant,
      "challenge/music_playlist_text/person",
    );
    const name = fullName(person);
    return {
      instruction: `Text ${name} the titles of the songs in my playlist '${title}', separated by ', ' in playlist order.`,
      params: { name, title },
      expect: {
        changes: [
          added(`texted ${person.phone} "${message}"`, "texts", (r) => {
            return (
              r.sender === world.user.phone && r.receiver === person.phone && r.message === message
            );
          }),
        ],
      },
    };
  },
  *solve(a, p) {
    const token = yield* a.login("music");
    const lists = yield* a.pages("music", "show_playlists", { access_token: token });
    const title = (p.title as string).toLowerCase();
    const hit = lists.find((l) => String(l.title).toLowerCase() === title);
    if (!hit) throw new ScriptError(`no playlist ${p.title}`);
    const playlist = (yield* a.call("music", "show_playlist", {
      access_token: token,
      playlist_id: hit.playlist_id,
    })) as JsonObject;
    const message = (playlist.songs as JsonObject[]).map((s) => s.title).join(", ");
    const contact = yield* findContact(a, p.name as string);
    const phoneToken = yield* a.login("phone");
    yield* a.call("phone", "send_text_message", {
      access_token: phoneToken,
      phone_number: contact.phone,
      message,
    });
    yield* a.finish();
  },
};

type FileSpec = { path: string; subject: string; content: (rng: Rng) => string };

const SHARED_FILES: FileSpec[] = [
  {
    path: "/documents/packing_list.txt",
    subject: "Packing list",
    content: (rng) =>
      [
        "Packing list",
        ...rng.sample(
          [
            "tent",
            "sleeping bag",
            "headlamp",
            "stove",
            "rain jacket",
            "first aid kit",
            "sunscreen",
          ],
          rng.int(3, 5),
        ),
      ].join("\n"),
  },
  {
    path: "/work/release_plan.txt",
    subject: "Release plan",
    content: (rng) =>
      `Release ${rng.int(2, 9)}.${rng.int(0, 9)}\nCode freeze: day ${rng.int(3, 9)} of the sprint\nLaunch: day ${rng.int(10, 14)}`,
  },
  {
    path: "/documents/garden_plan.txt",
    subject: "Garden plan",
    content: (rng) =>
      `Garden plan\nTomatoes: ${rng.int(3, 8)} plants\nBasil: ${rng.int(2, 6)} pots\nWater every ${rng.int(2, 3)} days`,
  },
  {
    path: "/work/interview_questions.txt",
    subject: "Interview questions",
    content: (rng) =>
      `Interview questions (${rng.int(30, 60)} min)\n1. Tell me about a project you led.\n2. How do you handle a missed deadline?\n3. Design a ${rng.pick(["parking lot", "library", "chat"])} system.`,
  },
  {
    path: "/documents/moving_checklist.txt",
    subject: "Moving checklist",
    content: (rng) =>
      `Moving checklist\nBoxes: ${rng.int(15, 40)}\nTruck booked for ${rng.int(7, 10)}am\nForward mail to the new address`,
  },
];

/** Emails a contact the content of a file. */
const filesMailContent: TaskTemplate = {
  id: "files_mail_content",
  difficulty: 2,
  apps: ["files", "mail", "phone"],
  challenge: true,
  build(world, rng, variant) {
    const spec = variantPick(world, SHARED_FILES, variant, "challenge/files_mail_content/file");
    const content = spec.content(rng);
    insert(world.db, "files", {
      owner: world.user.email,
      path: spec.path,
      content,
      size: content.length,
      created_at: stampDaysAgo(world, rng, rng.int(1, 30), [8, 21]),
    });
    const person = variantPick(world, world.people, variant, "challenge/files_mail_content/person");
    const name = fullName(person);
    const me = world.user.email;
    const isCopy = (r: Row) =>
      r.owner === person.email &&
      r.folder === "inbox" &&
      r.sender === me &&
      r.subject === spec.subject;
    return {
      instruction: `Email the content of my file ${spec.path} to ${name} with the subject '${spec.subject}'.`,
      params: { path: spec.path, name, subject: spec.subject },
      expect: {
        changes: [
          added(`emailed ${spec.path} to ${person.email}`, "emails", (r) => {
            return (
              r.owner === me &&
              r.folder === "sent" &&
              r.sender === me &&
              sameSet(r.recipients, [person.email]) &&
              r.subject === spec.subject &&
              r.body === content
            );
          }),
        ],
        // The recipient's inbox copy comes with the sent email.
        allow: (c) => c.table === "emails" && c.kind === "added" && !!c.after && isCopy(c.after),
      },
    };
  },
  *solve(a, p) {
    const token = yield* a.login("files");
    const file = (yield* a.call("files", "show_file", {
      access_token: token,
      path: p.path,
    })) as JsonObject;
    const email = yield* contactEmail(a, p.name as string);
    const mailToken = yield* a.login("mail");
    yield* a.call("mail", "send_email", {
      access_token: mailToken,
      recipients: [email],
      subject: p.subject,
      body: file.content,
    });
    yield* a.finish();
  },
};

export const CHALLENGE_TEMPLATES: TaskTemplate[] = [
  splitbillAddExpense,
  splitbillOwedBy,
  splitbillSettlePay,
  notesFromMail,
  todoFromCalendar,
  musicPlaylistText,
  filesMailContent,
  calendarCountDay,
];
