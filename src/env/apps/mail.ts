import { findRow, insert } from "../db";
import { ApiError, type Db, type Person, type Row } from "../types";
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

const INBOX_FIELDS = ["email_id", "sender", "subject", "sent_at", "read"];
const SENT_FIELDS = ["email_id", "recipients", "subject", "sent_at"];
const EMAIL_FIELDS = ["email_id", "folder", "sender", "recipients", "subject", "body", "sent_at"];
const inboxView = (r: Row) => pick({ ...r, email_id: r.id }, INBOX_FIELDS);
const sentView = (r: Row) => pick({ ...r, email_id: r.id }, SENT_FIELDS);
const emailView = (r: Row) => pick({ ...r, email_id: r.id }, EMAIL_FIELDS);

/** Checks and normalises a recipient list: non-empty, every address a known person, no repeats. */
function recipientList(db: Db, value: unknown): string[] {
  const list = value as string[];
  if (list.length === 0) throw new ApiError("recipients must not be empty.");
  const out: string[] = [];
  for (const raw of list) {
    const email = raw.trim().toLowerCase();
    if (!findRow(db, "people", (p) => p.email === email))
      throw new ApiError(`No person with email '${raw}'.`);
    if (!out.includes(email)) out.push(email);
  }
  return out;
}

/** Delivers an email: a sent copy for the sender and an inbox copy for each recipient. */
export function deliver(
  db: Db,
  sender: string,
  recipients: string[],
  subject: string,
  body: string,
  sentAt: string,
  readBy: (owner: string) => boolean = () => false,
): Row {
  const sent = insert(db, "emails", {
    owner: sender,
    folder: "sent",
    sender,
    recipients,
    subject,
    body,
    sent_at: sentAt,
  });
  for (const r of recipients)
    insert(db, "emails", {
      owner: r,
      folder: "inbox",
      sender,
      recipients,
      subject,
      body,
      sent_at: sentAt,
      read: readBy(r),
    });
  return sent;
}

function prefixed(prefix: string, subject: string): string {
  return subject.toLowerCase().startsWith(prefix.toLowerCase()) ? subject : `${prefix}${subject}`;
}

/** Mail: the user's inbox and sent emails; sending delivers to other people's inboxes. */
export const mail: AppModule = {
  spec: defineApp("mail", "Email: inbox, sent emails, send, reply, forward, delete.", [
    loginApi("mail"),
    {
      name: "show_inbox",
      description:
        "Emails you received, newest first; optionally only those whose subject, sender or body contains query.",
      params: [opt("query", "string", "text in the subject, sender or body", "")],
      returns: `[{${INBOX_FIELDS.join(", ")}}]`,
      paged: true,
      handler: (ctx, args) =>
        newestFirst(
          owned(ctx, "emails").filter(
            (r) =>
              r.folder === "inbox" && matchesQuery(r, args.query, ["subject", "sender", "body"]),
          ),
          "sent_at",
        ).map(inboxView),
    },
    {
      name: "show_sent",
      description:
        "Emails you sent, newest first; optionally only those whose subject, recipients or body contains query.",
      params: [opt("query", "string", "text in the subject, recipients or body", "")],
      returns: `[{${SENT_FIELDS.join(", ")}}]`,
      paged: true,
      handler: (ctx, args) =>
        newestFirst(
          owned(ctx, "emails").filter(
            (r) =>
              r.folder === "sent" && matchesQuery(r, args.query, ["subject", "recipients", "body"]),
          ),
          "sent_at",
        ).map(sentView),
    },
    {
      name: "show_email",
      description: "Show one of your emails (inbox or sent) with its body.",
      params: [req("email_id", "integer", "")],
      returns: `{${EMAIL_FIELDS.join(", ")}}`,
      errors: ["email not found"],
      handler: (ctx, args) =>
        emailView(getRow(ctx.db, "emails", args.email_id as number, "email", ctx.user)),
    },
    {
      name: "send_email",
      description: "Send a new email to one or more people.",
      params: [
        req("recipients", "string[]", "email addresses"),
        req("subject", "string", ""),
        req("body", "string", ""),
      ],
      returns: '{"email_id": integer} (your sent copy)',
      errors: ["unknown recipient email", "no recipients", "empty subject or body"],
      mutates: true,
      handler: (ctx, args) => {
        const recipients = recipientList(ctx.db, args.recipients);
        const subject = nonEmpty(args.subject, "subject");
        const body = nonEmpty(args.body, "body");
        const sent = deliver(ctx.db, ctx.user, recipients, subject, body, ctx.now);
        return { email_id: sent.id };
      },
    },
    {
      name: "reply_to_email",
      description:
        'Reply to one of your emails with subject "Re: <subject>": to its sender for a received email, to its recipients for a sent one.',
      params: [req("email_id", "integer", "the email to reply to"), req("body", "string", "")],
      returns: '{"email_id": integer} (your sent copy)',
      errors: ["email not found", "empty body"],
      mutates: true,
      handler: (ctx, args) => {
        const e = getRow(ctx.db, "emails", args.email_id as number, "email", ctx.user);
        const body = nonEmpty(args.body, "body");
        const to = e.folder === "sent" ? (e.recipients as string[]) : [e.sender as string];
        const recipients = recipientList(ctx.db, to);
        const sent = deliver(
          ctx.db,
          ctx.user,
          recipients,
          prefixed("Re: ", e.subject as string),
          body,
          ctx.now,
        );
        return { email_id: sent.id };
      },
    },
    {
      name: "forward_email",
      description: 'Forward one of your emails to people, with subject "Fwd: <subject>".',
      params: [
        req("email_id", "integer", "the email to forward"),
        req("recipients", "string[]", "email addresses"),
      ],
      returns: '{"email_id": integer} (your sent copy)',
      errors: ["email not found", "unknown recipient email", "no recipients"],
      mutates: true,
      handler: (ctx, args) => {
        const e = getRow(ctx.db, "emails", args.email_id as number, "email", ctx.user);
        const recipients = recipientList(ctx.db, args.recipients);
        const body = `---------- Forwarded message from ${e.sender} (${e.sent_at}) ----------\n${e.body}`;
        const sent = deliver(
          ctx.db,
          ctx.user,
          recipients,
          prefixed("Fwd: ", e.subject as string),
          body,
          ctx.now,
        );
        return { email_id: sent.id };
      },
    },
    deleteOwnedApi(
      "delete_email",
      "Delete one of your emails (inbox or sent); other people's copies stay.",
      "emails",
      "email_id",
      "email",
      () => "Email deleted.",
    ),
  ]),
  seed: ({ db, user, people, today, rng }) => {
    const manager = personWith(people, rng, "manager");
    const roommate = personWith(people, rng, "roommate");
    const partner = personWith(people, rng, "partner");
    const sibling = personWith(people, rng, "sibling");
    const parent = personWith(people, rng, "parent");
    const coworkers = peopleWith(people, rng, "coworker", 3);
    const friends = peopleWith(people, rng, "friend", 4);
    const c = (i: number) => coworkers[i] ?? manager;
    const f = (i: number) => friends[i] ?? roommate;
    const me = user.email;
    const rent = rng.int(55, 95) * 10;
    const utilities = rng.int(6000, 14000) / 100;
    const budget = rng.int(20, 60) * 100;
    const hikeMiles = rng.int(4, 12);
    const flightNo = `${rng.pick(["AS", "UA", "DL"])}${rng.int(100, 999)}`;
    const tripDay = addDays(today, rng.int(10, 30));
    const dinnerDay = addDays(today, rng.int(2, 6));
    const reportDue = addDays(today, rng.int(3, 9));
    const books = rng.sample(
      ["The Overstory", "Project Hail Mary", "Circe", "Klara and the Sun", "Piranesi", "Educated"],
      3,
    );

    type Mail = { from: Person; to: Person[]; subject: string; body: string; days: number };
    const incoming: Mail[] = [
      {
        from: manager,
        to: [user, c(0)],
        subject: "Quarterly report draft",
        body: `Hi ${user.first_name}, please send me the quarterly report draft by ${reportDue}. ${c(0).first_name} will review the numbers.`,
        days: 2,
      },
      {
        from: roommate,
        to: [user],
        subject: "Rent and utilities",
        body: `Hey! Rent this month is $${rent} each and the utilities bill came to $${utilities.toFixed(2)} total. Can you pay me your half?`,
        days: 3,
      },
      {
        from: f(0),
        to: [user, f(1)],
        subject: `Dinner on ${dinnerDay}?`,
        body: `Want to get dinner on ${dinnerDay} at 7pm? I was thinking of the Thai place downtown. ${f(1).first_name} is in too.`,
        days: 1,
      },
      {
        from: c(1),
        to: [user],
        subject: "Team offsite budget",
        body: `The offsite budget is $${budget}. Can you check the venue quotes and let me know which one fits?`,
        days: 6,
      },
      {
        from: partner,
        to: [user],
        subject: "Flight details",
        body: `Booked! Flight ${flightNo} leaves on ${tripDay} at 8:15am. Don't forget your passport.`,
        days: 4,
      },
      {
        from: parent,
        to: [user, sibling],
        subject: "Family reunion",
        body: `We're planning the family reunion for the summer. ${sibling.first_name}, ${user.first_name}: please tell me which weekend works for you.`,
        days: 9,
      },
      {
        from: sibling,
        to: [user],
        subject: `Birthday gift for ${parent.first_name}`,
        body: `Should we split a gift for ${parent.first_name}'s birthday (${parent.birthday.slice(5)})? I found a nice scarf for $${rng.int(40, 90)}.`,
        days: 5,
      },
      {
        from: f(2),
        to: [user],
        subject: "Book club pick",
        body: `Next book club pick is "${books[0]}". We meet at my place in two weeks.`,
        days: 12,
      },
      {
        from: c(2),
        to: [user, c(0), manager],
        subject: "Standup notes",
        body: `Notes from today's standup: release moved to ${addDays(today, rng.int(5, 15))}. ${c(0).first_name} owns QA, ${user.first_name} owns the docs.`,
        days: 7,
      },
      {
        from: f(3),
        to: [user, f(0)],
        subject: "Weekend hike",
        body: `Anyone up for a ${hikeMiles}-mile hike on Saturday? Meet at the trailhead at 9.`,
        days: 8,
      },
      {
        from: manager,
        to: [user],
        subject: "Performance review scheduled",
        body: `Your performance review is scheduled for ${addDays(today, rng.int(7, 20))} at 2pm in room B.`,
        days: 15,
      },
      {
        from: roommate,
        to: [user],
        subject: "Internet bill",
        body: `The internet bill is $${rng.int(50, 90)} this month. I already paid it.`,
        days: 20,
      },
      {
        from: f(1),
        to: [user],
        subject: "Concert tickets",
        body: `I got two concert tickets for ${addDays(today, rng.int(10, 25))}. Tickets were $${rng.int(35, 80)} each, want one?`,
        days: 11,
      },
      {
        from: c(0),
        to: [user],
        subject: "Lunch tomorrow?",
        body: "Want to grab lunch tomorrow? The new ramen place opened near the office.",
        days: 1,
      },
    ];
    const outgoing: Mail[] = [
      {
        from: user,
        to: [manager],
        subject: "Vacation request",
        body: `Hi ${manager.first_name}, I'd like to take ${tripDay} to ${addDays(tripDay, 4)} off. Thanks!`,
        days: 10,
      },
      {
        from: user,
        to: [roommate],
        subject: "Cleaning schedule",
        body: "I made a cleaning schedule: I take kitchen and bathroom this week, you take living room.",
        days: 14,
      },
      {
        from: user,
        to: [f(2), f(0)],
        subject: "Book recommendations",
        body: `My picks for the next months: ${books.join(", ")}.`,
        days: 13,
      },
      {
        from: user,
        to: [c(1)],
        subject: "Venue quotes",
        body: "Attached are the three venue quotes. The lakeside one is the cheapest.",
        days: 5,
      },
      {
        from: user,
        to: [partner],
        subject: "Hotel booked",
        body: `Hotel is booked for ${tripDay}, 4 nights. Confirmation number ${rng.int(100000, 999999)}.`,
        days: 3,
      },
      {
        from: user,
        to: [sibling],
        subject: `Re: Birthday gift for ${parent.first_name}`,
        body: "Sounds good, let's split it. I'll send you my half.",
        days: 4,
      },
    ];
    const all = [...incoming, ...outgoing]
      .map((m) => ({ ...m, at: stampDaysAgo(today, rng, m.days, [7, 22]) }))
      .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    for (const m of all) {
      const read = rng.chance(0.6);
      deliver(
        db,
        m.from.email,
        m.to.map((p) => p.email),
        m.subject,
        m.body,
        m.at,
        (owner) => owner !== me || read,
      );
    }
  },
};
