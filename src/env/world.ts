import { APP_MODULES } from "./apps";
import { addDays } from "./apps/common";
import { insert } from "./db";
import { CITIES, EMAIL_DOMAINS, FIRST_NAMES, LAST_NAMES, RELATIONSHIPS } from "./names";
import { Rng } from "./rng";
import type { Db, Person, Row } from "./types";

export interface World {
  seed: number;
  /** The date the episode happens on (YYYY-MM-DD). */
  today: string;
  user: Person;
  /** Everyone else, with their relationship to the user. */
  people: Person[];
  db: Db;
}

/** Apps with accounts (everyone has one in each, with their own password). */
export const ACCOUNT_APPS = [
  "phone",
  "mail",
  "pay",
  "music",
  "notes",
  "todo",
  "files",
  "calendar",
  "shop",
  "splitbill",
];

function password(rng: Rng): string {
  const chars = "abcdefghjkmnpqrstuvwxyz23456789";
  let s = "";
  for (let i = 0; i < 6; i++) s += chars[rng.int(0, chars.length - 1)];
  return s;
}

/** Generates a whole world from a seed: same seed, same world, byte for byte, in Node and browsers. */
export function generateWorld(seed: number): World {
  const rng = Rng.derive(seed, "people");
  const today = addDays("2026-03-01", rng.int(0, 200));
  const firsts = rng.sample(FIRST_NAMES, 37);
  const lasts = rng.shuffle(LAST_NAMES);
  const rels = rng.shuffle(RELATIONSHIPS);
  const phones = rng.sample(
    Array.from({ length: 900 }, (_, i) => 100 + i),
    37,
  );
  const persons: Person[] = firsts.map((first, i) => {
    const last = lasts[i % lasts.length] as string;
    const domain = rng.pick(EMAIL_DOMAINS);
    return {
      id: i + 1,
      first_name: first,
      last_name: last,
      email: `${first}.${last}@${domain}`.toLowerCase(),
      phone: `555-0${phones[i]}`,
      birthday: addDays("1970-01-01", rng.int(0, 30 * 365)),
      city: rng.pick(CITIES),
      relationship: i === 0 ? "self" : (rels[(i - 1) % rels.length] as string),
    };
  });
  const user = persons[0] as Person;
  const people = persons.slice(1);
  const db: Db = { people: persons.map((p) => ({ ...p }) as unknown as Row), accounts: [] };
  for (const p of persons)
    for (const app of ACCOUNT_APPS)
      insert(db, "accounts", {
        app,
        username: app === "phone" ? p.phone : p.email,
        password: password(rng),
      });
  for (const mod of APP_MODULES)
    mod.seed?.({ db, user, people, today, rng: Rng.derive(seed, mod.spec.name) });
  return { seed, today, user, people, db };
}

export function fullName(p: Person): string {
  return `${p.first_name} ${p.last_name}`;
}
