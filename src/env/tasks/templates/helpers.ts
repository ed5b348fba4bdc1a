import { addDays } from "../../apps/common";
import { deliver } from "../../apps/mail";
import { type Change, findRow, table } from "../../db";
import { Rng } from "../../rng";
import type { Db, JsonObject, Person, Row } from "../../types";
import type { World } from "../../world";
import { type Act, type Actor, ScriptError } from "../actor";
import { added, sameAmount } from "../expect";
import type { ExpectedChange } from "../types";

/**
 * Shared pieces of templates: picking per scenario, time stamps, world edits (relationships,
 * mail), and lookups that solution scripts reuse.
 */

export function fullName(p: Person): string {
  return `${p.first_name} ${p.last_name}`;
}

/** People with one of the relationships; falls back to anyone when none has it. */
export function peopleWith(world: World, relationships: string[]): Person[] {
  const found = world.people.filter((p) => relationships.includes(p.relationship));
  return found.length > 0 ? found : world.people;
}

/** A stream shared by a scenario's variants (seeded by the world and a label). */
export function scenarioRng(world: World, label: string): Rng {
  return Rng.derive(world.seed, label);
}

/**
 * The item for variant `variant` from one shuffle shared by the scenario's variants (seeded by the
 * world and a label), so the 3 variants get distinct items whenever there are enough.
 */
export function variantPick<T>(
  world: World,
  items: readonly T[],
  variant: number,
  label: string,
): T {
  const shuffled = scenarioRng(world, label).shuffle(items);
  return shuffled[variant % shuffled.length] as T;
}

/** A time stamp "YYYY-MM-DDTHH:MM" on `date`. */
export function minuteStamp(date: string, hour: number, minute: number): string {
  return `${date}T${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}`;
}

/**
 * A time `days` days before today, at a random minute from hours[0]:00 to hours[1]:59 (draws the
 * hour, then the minute).
 */
export function stampDaysAgo(
  world: World,
  rng: Rng,
  days: number,
  hours: readonly [number, number],
): string {
  const hour = rng.int(hours[0], hours[1]);
  return minuteStamp(addDays(world.today, -days), hour, rng.int(0, 59));
}

/** The rows of a table that the user owns. */
export function ownedRows(world: World, name: string): Row[] {
  return table(world.db, name).filter((r) => r.owner === world.user.email);
}

/** Dollars as people write them: 42 or 42.50. */
export function dollars(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

/** Sets a person's relationship consistently in world.people, the people table and the contacts. */
export function setRelationship(world: World, person: Person, relationship: string): void {
  world.people = world.people.map((p) => (p.id === person.id ? { ...p, relationship } : p));
  for (const r of table(world.db, "people")) if (r.id === person.id) r.relationship = relationship;
  for (const c of table(world.db, "contacts"))
    if (c.owner === world.user.phone && c.phone === person.phone) c.relationship = relationship;
}

/**
 * Makes the relationship's group between `min` and `max` people (at least `target`): friends join
 * it when it is too small, extra members become friends when it is too big.
 */
export function groupOf(
  world: World,
  rng: Rng,
  relationship: string,
  target: number,
  max: number,
): Person[] {
  const members = () => world.people.filter((p) => p.relationship === relationship);
  const friends = rng.shuffle(world.people.filter((p) => p.relationship === "friend"));
  while (members().length < target && friends.length > 0)
    setRelationship(world, friends.pop() as Person, relationship);
  for (const extra of members().slice(max)) setRelationship(world, extra, "friend");
  return members();
}

/**
 * Delivers an email as mail does (the sender's sent copy, then each recipient's inbox copy, all
 * read or all unread), and returns the first recipient's inbox copy, not the sent copy.
 */
export function deliverMail(
  db: Db,
  from: string,
  to: string[],
  subject: string,
  body: string,
  sentAt: string,
  read: boolean,
): Row {
  deliver(db, from, to, subject, body, sentAt, () => read);
  const emails = table(db, "emails");
  const copies = emails.slice(emails.length - to.length);
  return copies.filter((r) => r.owner === to[0]).pop() as Row;
}

/** The user's inbox rows. */
export function inboxOf(world: World): Row[] {
  return ownedRows(world, "emails").filter((e) => e.folder === "inbox");
}

/** The obvious but often wrong guess of someone's email from their name (confabulation). */
export function guessEmail(name: string): string {
  return `${name.toLowerCase().replace(/\s+/g, ".")}@mail.com`;
}

/** Looks a person's contact up in phone by full name (logging in to phone as needed). */
export function* findContact(a: Actor, name: string): Act<JsonObject> {
  const token = yield* a.login("phone");
  const found = yield* a.pages("phone", "search_contacts", { access_token: token, query: name });
  const hit = found.find(
    (c) => `${c.first_name} ${c.last_name}`.toLowerCase() === name.toLowerCase(),
  );
  if (!hit) throw new ScriptError(`no contact named ${name}`);
  return hit;
}

/** A person's email: looked up in phone contacts, or (by a flawed actor) guessed from the name. */
export function* contactEmail(a: Actor, name: string): Act<string> {
  return yield* a.recall(guessEmail(name), function* () {
    const c = yield* findContact(a, name);
    return c.email as string;
  });
}

/** The contacts with a relationship, all pages. */
export function* contactsWith(a: Actor, relationship: string): Act<JsonObject[]> {
  const token = yield* a.login("phone");
  return yield* a.pages("phone", "search_contacts", { access_token: token, relationship });
}

export function money(n: number): number {
  return Math.round(n * 100) / 100;
}

/** The pay account ids of these emails, -1 for none (for balance side effects). */
export function accountIds(world: World, emails: string[]): number[] {
  return emails.map((e) => findRow(world.db, "pay_accounts", (r) => r.email === e)?.id ?? -1);
}

/**
 * A transaction from the user to `receiver` with exactly this amount and note; the test's name
 * shows the amount as `shown` ("$25" unless told otherwise).
 */
export function sentMoney(
  world: World,
  receiver: string,
  amount: number,
  note: string,
  shown = `$${amount}`,
): ExpectedChange {
  return added(
    `sent ${shown} to ${receiver} with note "${note}"`,
    "transactions",
    (r) =>
      r.sender === world.user.email &&
      r.receiver === receiver &&
      sameAmount(r.amount, amount) &&
      r.note === note,
  );
}

/** Whether a row holds this list of recipients, in this order. */
export function sameList(value: unknown, want: string[]): boolean {
  return (
    Array.isArray(value) && value.length === want.length && want.every((w, i) => value[i] === w)
  );
}

/** The user's sent copy of an email with exactly these values. */
export function sentEmail(
  world: World,
  name: string,
  recipients: string[],
  subject: string,
  body: string,
) {
  return added(name, "emails", (r) => {
    return (
      r.owner === world.user.email &&
      r.folder === "sent" &&
      r.sender === world.user.email &&
      sameList(r.recipients, recipients) &&
      r.subject === subject &&
      r.body === body
    );
  });
}

/** Allows the recipients' unread inbox copies of that email. */
export function inboxCopies(world: World, recipients: string[], subject: string, body: string) {
  return (c: Change) =>
    c.table === "emails" &&
    c.kind === "added" &&
    !!c.after &&
    recipients.includes(c.after.owner as string) &&
    c.after.folder === "inbox" &&
    c.after.sender === world.user.email &&
    sameList(c.after.recipients, recipients) &&
    c.after.subject === subject &&
    c.after.body === body &&
    c.after.read === false;
}
