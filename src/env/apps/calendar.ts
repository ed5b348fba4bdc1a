import { findRow, insert } from "../db";
import { ApiError, type Db, type Json, type Person, type Row } from "../types";
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
  pick,
  req,
} from "./common";

const LIST_FIELDS = ["event_id", "title", "date", "start", "duration_min", "location"];
const EVENT_FIELDS = [
  "event_id",
  "title",
  "date",
  "start",
  "duration_min",
  "location",
  "attendees",
];
const eventView = (r: Row) => pick({ ...r, event_id: r.id }, EVENT_FIELDS);

function hhmm(value: Json, what = "start"): string {
  const s = value as string;
  if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(s))
    throw new ApiError(`${what} must be a time like 14:30.`);
  return s;
}

function duration(value: Json): number {
  const n = value as number;
  if (n < 1 || n > 1440) throw new ApiError("duration_min must be between 1 and 1440.");
  return n;
}

/** Checks an attendee email: a known person, not the user. */
function attendee(db: Db, user: string, email: string): string {
  if (email === user) throw new ApiError("You own the event; do not add yourself as an attendee.");
  if (!findRow(db, "people", (p) => p.email === email))
    throw new ApiError(`No person with email ${email}.`);
  return email;
}

const byTime = (a: Row, b: Row) => {
  const x = `${a.date} ${a.start}`;
  const y = `${b.date} ${b.start}`;
  return x < y ? -1 : x > y ? 1 : a.id - b.id;
};

/** [title, attendee relationship, how many, location, duration, start times]; "{name}" = first attendee. */
const TEMPLATES: [string, string | null, number, string, number, string[]][] = [
  ["Team standup", "coworker", 3, "Office room 2B", 15, ["09:30"]],
  ["Team standup", "coworker", 3, "Office room 2B", 15, ["09:30"]],
  ["1:1 with {name}", "manager", 1, "Office", 30, ["10:00", "11:00", "15:00"]],
  ["Project review", "coworker", 2, "Conference room A", 60, ["13:00", "14:00", "16:00"]],
  ["Lunch with {name}", "friend", 1, "Cafe Verde", 60, ["12:00", "12:30"]],
  ["Dinner with {name}", "partner", 1, "Luigi's Trattoria", 90, ["19:00", "19:30"]],
  ["Call with {name}", "parent", 1, "Phone", 30, ["18:00", "20:00"]],
  ["Dentist appointment", null, 0, "Bright Smile Dental", 45, ["08:30", "16:30"]],
  ["Yoga class", null, 0, "Downtown Studio", 60, ["07:00", "18:30"]],
  ["Book club", "neighbor", 2, "City Library", 90, ["19:00"]],
  ["Movie night", "friend", 2, "Rialto Cinema", 150, ["20:00"]],
  ["House meeting", "roommate", 2, "Home", 30, ["21:00"]],
  ["Coffee with {name}", "sibling", 1, "Bean There", 45, ["09:00", "10:30"]],
  ["Hike with {name}", "friend", 2, "Cedar Ridge Trailhead", 180, ["08:00", "09:00"]],
  ["Car service", null, 0, "AutoCare Garage", 60, ["08:00", "17:00"]],
];

/** Calendar: the user's events with attendees (emails of people in the world). */
export const calendar: AppModule = {
  spec: defineApp("calendar", "Your calendar events: dates, times, locations and attendees.", [
    loginApi("calendar"),
    {
      name: "show_events",
      description:
        "Your events sorted by date and start time; optionally on one date or within a date range.",
      params: [
        opt("date", "string", "only this date, like 2026-05-14"),
        opt("from_date", "string", "only on or after this date"),
        opt("to_date", "string", "only on or before this date"),
      ],
      returns: `[{${LIST_FIELDS.join(", ")}}]`,
      errors: ["bad date"],
      paged: true,
      handler: (ctx, args) => {
        const date = args.date == null ? null : isoDate(args.date, "date");
        const from = args.from_date == null ? null : isoDate(args.from_date, "from_date");
        const to = args.to_date == null ? null : isoDate(args.to_date, "to_date");
        return owned(ctx, "events")
          .filter(
            (e) =>
              (date === null || e.date === date) &&
              (from === null || (e.date as string) >= from) &&
              (to === null || (e.date as string) <= to),
          )
          .sort(byTime)
          .map((r) => pick({ ...r, event_id: r.id }, LIST_FIELDS));
      },
    },
    {
      name: "show_event",
      description: "Show one of your events with its attendees.",
      params: [req("event_id", "integer", "")],
      returns: `{${EVENT_FIELDS.join(", ")}}`,
      errors: ["event not found"],
      handler: (ctx, args) =>
        eventView(getRow(ctx.db, "events", args.event_id as number, "event", ctx.user)),
    },
    {
      name: "create_event",
      description: "Create an event.",
      params: [
        req("title", "string", ""),
        req("date", "string", "like 2026-05-14"),
        req("start", "string", "24-hour time like 14:30"),
        opt("duration_min", "integer", "minutes", 60),
        opt("attendees", "string[]", "emails of the people invited", []),
        opt("location", "string", "", ""),
      ],
      returns: '{"event_id": integer}',
      errors: [
        "empty title",
        "bad date",
        "bad start time",
        "bad duration",
        "unknown attendee email",
      ],
      mutates: true,
      handler: (ctx, args) => {
        const title = nonEmpty(args.title, "title");
        const date = isoDate(args.date, "date");
        const start = hhmm(args.start);
        const duration_min = duration(args.duration_min);
        const attendees = [...new Set(args.attendees as string[])].map((e) =>
          attendee(ctx.db, ctx.user, e),
        );
        const row = insert(ctx.db, "events", {
          owner: ctx.user,
          title,
          date,
          start,
          duration_min,
          attendees,
          location: (args.location as string).trim(),
        });
        return { event_id: row.id };
      },
    },
    {
      name: "update_event",
      description: "Change an event; only the fields given change.",
      params: [
        req("event_id", "integer", ""),
        opt("title", "string", ""),
        opt("date", "string", "like 2026-05-14"),
        opt("start", "string", "like 14:30"),
        opt("duration_min", "integer", ""),
        opt("location", "string", ""),
      ],
      returns: `the updated event {${EVENT_FIELDS.join(", ")}}`,
      errors: [
        "event not found",
        "nothing to update",
        "bad date",
        "bad start time",
        "bad duration",
      ],
      mutates: true,
      handler: (ctx, args) => {
        const e = getRow(ctx.db, "events", args.event_id as number, "event", ctx.user);
        const fields = ["title", "date", "start", "duration_min", "location"].filter(
          (f) => args[f] != null,
        );
        if (fields.length === 0)
          throw new ApiError("Give at least one of title, date, start, duration_min, location.");
        const changes: Record<string, Json> = {};
        if (args.title != null) changes.title = nonEmpty(args.title, "title");
        if (args.date != null) changes.date = isoDate(args.date, "date");
        if (args.start != null) changes.start = hhmm(args.start);
        if (args.duration_min != null) changes.duration_min = duration(args.duration_min);
        if (args.location != null) changes.location = (args.location as string).trim();
        Object.assign(e, changes);
        return eventView(e);
      },
    },
    deleteOwnedApi(
      "delete_event",
      "Delete one of your events.",
      "events",
      "event_id",
      "event",
      (r) => `Event '${r.title}' deleted.`,
    ),
    {
      name: "add_attendee",
      description: "Invite a person to one of your events.",
      params: [req("event_id", "integer", ""), req("email", "string", "the person's email")],
      returns: "the attendee list",
      errors: ["event not found", "unknown email", "already an attendee"],
      mutates: true,
      handler: (ctx, args) => {
        const e = getRow(ctx.db, "events", args.event_id as number, "event", ctx.user);
        const email = attendee(ctx.db, ctx.user, args.email as string);
        const list = e.attendees as string[];
        if (list.includes(email))
          throw new ApiError(`${email} is already an attendee of event ${e.id}.`);
        e.attendees = [...list, email];
        return e.attendees;
      },
    },
    {
      name: "remove_attendee",
      description: "Remove a person from one of your events.",
      params: [req("event_id", "integer", ""), req("email", "string", "the person's email")],
      returns: "the attendee list",
      errors: ["event not found", "not an attendee"],
      mutates: true,
      handler: (ctx, args) => {
        const e = getRow(ctx.db, "events", args.event_id as number, "event", ctx.user);
        const list = e.attendees as string[];
        if (!list.includes(args.email as string))
          throw new ApiError(`${args.email} is not an attendee of event ${e.id}.`);
        e.attendees = list.filter((a) => a !== args.email);
        return e.attendees;
      },
    },
  ]),
  seed: ({ db, user, people, today, rng }) => {
    const pickPeople = (rel: string | null, n: number): Person[] => {
      if (!rel || n === 0) return [];
      const matching = people.filter((p) => p.relationship === rel);
      const others = rng.shuffle(people.filter((p) => p.relationship !== rel));
      return [...rng.shuffle(matching), ...others].slice(0, n);
    };
    const used = new Set<string>();
    for (const [title, rel, n, location, duration_min, starts] of TEMPLATES) {
      const who = pickPeople(rel, n);
      let date = addDays(today, rng.int(-7, 13));
      let start = rng.pick(starts);
      // Keep every (date, start) distinct so the order by time is unambiguous.
      while (used.has(`${date} ${start}`)) {
        date = addDays(date, 1);
        start = rng.pick(starts);
      }
      used.add(`${date} ${start}`);
      insert(db, "events", {
        owner: user.email,
        title: title.replace("{name}", who[0]?.first_name ?? ""),
        date,
        start,
        duration_min,
        attendees: who.map((p) => p.email),
        location,
      });
    }
  },
};
