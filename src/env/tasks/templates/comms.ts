import { newestFirst } from "../../apps/common";
import type { Person, Row } from "../../types";
import { ScriptError } from "../actor";
import { added } from "../expect";
import type { TaskTemplate } from "../types";
import {
  contactEmail,
  contactsWith,
  deliverMail,
  fullName,
  groupOf,
  inboxCopies,
  inboxOf,
  sentEmail,
  stampDaysAgo,
  variantPick,
} from "./helpers";

/** Templates centred on phone texts and mail. */

const SINGLE_RELATIONSHIPS = ["manager", "partner", "parent", "sibling"];
const TEXTS = [
  "Running 10 minutes late, sorry!",
  "Can you call me tonight?",
  "I picked up the groceries.",
  "Landed safely, talk soon.",
  "Don't forget dinner on Sunday.",
  "I left the keys with the neighbor.",
  "Are we still on for tomorrow?",
  "Happy Friday! Coffee later?",
];

/** Texts the one person with a given relationship (made unique if needed). */
export const textRelationship: TaskTemplate = {
  id: "text_relationship",
  difficulty: 1,
  apps: ["phone"],
  build(world, rng, variant) {
    const relationship = variantPick(world, SINGLE_RELATIONSHIPS, variant, "text_relationship");
    const person = groupOf(world, rng, relationship, 1, 1)[0] as Person;
    const message = variantPick(world, TEXTS, variant, "text_relationship.message");
    return {
      instruction: `Text my ${relationship} "${message}"`,
      params: { relationship, message },
      expect: {
        changes: [
          added(
            `texted "${message}" to ${person.phone}`,
            "texts",
            (r) =>
              r.sender === world.user.phone && r.receiver === person.phone && r.message === message,
          ),
        ],
      },
    };
  },
  *solve(a, p) {
    const found = yield* contactsWith(a, p.relationship as string);
    const person = found[0];
    if (found.length !== 1 || !person)
      throw new ScriptError(`expected one ${p.relationship}, found ${found.length}`);
    const token = yield* a.login("phone");
    yield* a.call("phone", "send_text_message", {
      access_token: token,
      phone_number: person.phone,
      message: p.message,
    });
    yield* a.finish();
  },
};

const NOTES = [
  ["Saturday plans", "Are you free on Saturday afternoon? I was thinking of a picnic in the park."],
  ["Book recommendation", "I just finished a great novel and think you would love it."],
  ["Moving boxes", "I have a stack of moving boxes left over if you still need some."],
  ["Thank you", "Thanks again for your help last week, it meant a lot."],
  ["Garden tools", "Could I borrow your garden tools this weekend?"],
  ["Photos from the trip", "I finally sorted the photos from our trip, will share them soon."],
  ["Running club", "The running club meets on Tuesdays at 7am now."],
  ["Recipe swap", "Send me your soup recipe and I will send you my bread one."],
];

/** Sends an email with a given subject and body to a contact found by name. */
export const mailSendContact: TaskTemplate = {
  id: "mail_send_contact",
  difficulty: 1,
  apps: ["phone", "mail"],
  build(world, _rng, variant) {
    const person = variantPick(world, world.people, variant, "mail_send_contact.person");
    const [subject, body] = variantPick(world, NOTES, variant, "mail_send_contact.note") as [
      string,
      string,
    ];
    const name = fullName(person);
    const to = [person.email];
    return {
      instruction: `Email ${name} with the subject "${subject}" and the body "${body}"`,
      params: { name, subject, body },
      expect: {
        changes: [sentEmail(world, `emailed "${subject}" to ${person.email}`, to, subject, body)],
        allow: inboxCopies(world, to, subject, body),
      },
    };
  },
  *solve(a, p) {
    const email = yield* contactEmail(a, p.name as string);
    const token = yield* a.login("mail");
    yield* a.call("mail", "send_email", {
      access_token: token,
      recipients: [email],
      subject: p.subject,
      body: p.body,
    });
    yield* a.finish();
  },
};

const CHATTER = [
  ["Quick question", "Do you still have my umbrella from last week?"],
  ["Weekend photos", "Here are the photos I promised from the weekend."],
  ["Parking", "The parking lot on 5th street is closed on Monday."],
  ["Podcast", "You have to listen to the episode about deep sea fish."],
  ["Plant care", "Water the fern twice a week and keep it out of direct sun."],
  ["Lost and found", "I think you left your scarf at my place."],
  ["Checking in", "How have you been? It has been a while."],
  ["Game night", "Game night is at my place on Thursday, bring snacks."],
  ["Printer", "The printer at the library is fixed now."],
  ["Bike", "My bike is back from the shop, want to ride on Sunday?"],
];

/** Counts the emails in the user's inbox from one person (more than a page, even filtered). */
export const mailCountFrom: TaskTemplate = {
  id: "mail_count_from",
  difficulty: 2,
  apps: ["phone", "mail"],
  build(world, rng, variant) {
    const person = variantPick(world, world.people, variant, "mail_count_from");
    const others = world.people.filter((p) => p.id !== person.id);
    const me = world.user.email;
    const days = rng.sample(
      Array.from({ length: 45 }, (_, i) => i + 1),
      rng.int(6, 9),
    );
    for (const d of days) {
      const [subject, body] = rng.pick(CHATTER) as [string, string];
      const to = rng.chance(0.3) ? [me, rng.pick(others).email] : [me];
      deliverMail(
        world.db,
        person.email,
        to,
        subject,
        body,
        stampDaysAgo(world, rng, d, [7, 21]),
        true,
      );
    }
    // A forward from someone else quotes the person's address in its body: a query alone is not enough.
    const [subject, body] = rng.pick(CHATTER) as [string, string];
    const at = stampDaysAgo(world, rng, rng.int(1, 30), [7, 21]);
    const fwd = `---------- Forwarded message from ${person.email} (${at}) ----------\n${body}`;
    deliverMail(world.db, rng.pick(others).email, [me], `Fwd: ${subject}`, fwd, at, false);
    const count = inboxOf(world).filter((e) => e.sender === person.email).length;
    const name = fullName(person);
    return {
      instruction: `How many emails in my inbox are from ${name}? Answer with a number.`,
      params: { name },
      expect: { changes: [], answer: count },
    };
  },
  *solve(a, p) {
    const email = yield* contactEmail(a, p.name as string);
    const token = yield* a.login("mail");
    const found = yield* a.pages("mail", "show_inbox", { access_token: token, query: email });
    yield* a.finish(found.filter((e) => e.sender === email).length);
  },
};

const TOPICS = ["recital", "carpool", "invoice", "workshop", "potluck", "fundraiser", "seminar"];
const REPLIES = [
  "Thanks, see you there!",
  "Sounds good to me.",
  "Got it, I will take a look tonight.",
  "Thanks for letting me know.",
  "Count me in.",
];

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function topicSubjects(word: string): string[] {
  return [
    `${capitalized(word)} update`,
    `Question about the ${word}`,
    `${capitalized(word)} reminder`,
    `New ${word} details`,
    `The ${word} next week`,
  ];
}

/** Replies to the latest received email with a word in its subject (not only in its body). */
export const mailReplyLatest: TaskTemplate = {
  id: "mail_reply_latest",
  difficulty: 2,
  apps: ["mail"],
  build(world, rng, variant) {
    const used = inboxOf(world).map((e) => String(e.subject).toLowerCase());
    const fresh = TOPICS.filter((w) => !used.some((s) => s.includes(w)));
    const word = variantPick(
      world,
      fresh.length > 0 ? fresh : TOPICS,
      variant,
      "mail_reply_latest",
    );
    const me = world.user.email;
    const senders = rng.sample(world.people, 5);
    const subjects = rng.sample(topicSubjects(word), rng.int(3, 4));
    const days = rng.sample(
      Array.from({ length: 20 }, (_, i) => i + 3),
      subjects.length,
    );
    subjects.forEach((subject, i) => {
      const body = `Hi ${world.user.first_name}, a note about the ${word}: details to follow.`;
      deliverMail(
        world.db,
        (senders[i] as Person).email,
        [me],
        subject,
        body,
        stampDaysAgo(world, rng, days[i] as number, [7, 21]),
        rng.chance(0.5),
      );
    });
    // Newer: an email that mentions the word only in its body, and one the user sent.
    const last = senders[4] as Person;
    const bodyOnly = `Are you going to the ${word}? Let me know.`;
    deliverMail(
      world.db,
      last.email,
      [me],
      "Quick question",
      bodyOnly,
      stampDaysAgo(world, rng, 1, [7, 21]),
      false,
    );
    deliverMail(
      world.db,
      me,
      [last.email],
      `${capitalized(word)} plans`,
      "I will be there.",
      stampDaysAgo(world, rng, 2, [7, 21]),
      true,
    );
    const latest = newestFirst(
      inboxOf(world).filter((e) => String(e.subject).toLowerCase().includes(word)),
      "sent_at",
    )[0] as Row;
    const text = rng.pick(REPLIES);
    const to = [latest.sender as string];
    const subject = `Re: ${latest.subject}`;
    return {
      instruction: `Reply "${text}" to the latest email I received with "${word}" in its subject.`,
      params: { text, word },
      expect: {
        changes: [sentEmail(world, `replied to email ${latest.id}`, to, subject, text)],
        allow: inboxCopies(world, to, subject, text),
      },
    };
  },
  *solve(a, p) {
    const word = (p.word as string).toLowerCase();
    const token = yield* a.login("mail");
    const found = yield* a.pages("mail", "show_inbox", { access_token: token, query: word });
    const latest = found.find((e) => String(e.subject).toLowerCase().includes(word));
    if (!latest) throw new ScriptError(`no email with ${word} in its subject`);
    yield* a.call("mail", "reply_to_email", {
      access_token: token,
      email_id: latest.email_id,
      body: p.text,
    });
    yield* a.finish();
  },
};

const SHAREABLE = [
  ["Cabin Wi-Fi password", "The cabin Wi-Fi is CedarLake2024, the router is in the hall closet."],
  ["Lemon bar recipe", "Butter, sugar, flour, four lemons and a pinch of salt. Bake 25 minutes."],
  ["Moving checklist", "Book the van, label the boxes, forward the mail, return the keys."],
  [
    "Wedding playlist ideas",
    "Start slow, then the classics, and end with something everyone knows.",
  ],
  ["Bike repair quote", "New chain and brake pads come to $85, ready on Thursday."],
  ["Road trip packing list", "Snacks, chargers, sunscreen, a paper map and good music."],
  ["Garden plot schedule", "Plot 12 is ours on Mondays and Thursdays, watering at dusk."],
];

/** Forwards the email with an exact subject to a contact named with their relationship. */
export const mailForwardTo: TaskTemplate = {
  id: "mail_forward_to",
  difficulty: 2,
  apps: ["phone", "mail"],
  build(world, rng, variant) {
    const [subject, body] = variantPick(world, SHAREABLE, variant, "mail_forward_to.mail") as [
      string,
      string,
    ];
    const target = variantPick(world, world.people, variant, "mail_forward_to.person");
    const [author, replier] = rng.sample(
      world.people.filter((p) => p.id !== target.id),
      2,
    ) as [Person, Person];
    const me = world.user.email;
    const original = deliverMail(
      world.db,
      author.email,
      [me],
      subject,
      body,
      stampDaysAgo(world, rng, rng.int(12, 25), [7, 21]),
      true,
    );
    // A later reply in the same thread: the query finds both, only one has the exact subject.
    deliverMail(
      world.db,
      replier.email,
      [me, author.email],
      `Re: ${subject}`,
      "Thanks for this!",
      stampDaysAgo(world, rng, rng.int(2, 10), [7, 21]),
      true,
    );
    const name = fullName(target);
    const to = [target.email];
    const fwdSubject = `Fwd: ${subject}`;
    const fwdBody = `---------- Forwarded message from ${author.email} (${original.sent_at}) ----------\n${body}`;
    return {
      instruction: `Forward the email with the subject "${subject}" to my ${target.relationship} ${name}.`,
      params: { subject, relationship: target.relationship, name },
      expect: {
        changes: [
          sentEmail(
            world,
            `forwarded email ${original.id} to ${target.email}`,
            to,
            fwdSubject,
            fwdBody,
          ),
        ],
        allow: inboxCopies(world, to, fwdSubject, fwdBody),
      },
    };
  },
  *solve(a, p) {
    const email = yield* contactEmail(a, p.name as string);
    const token = yield* a.login("mail");
    const found = yield* a.pages("mail", "show_inbox", { access_token: token, query: p.subject });
    const mail = found.find((e) => e.subject === p.subject);
    if (!mail) throw new ScriptError(`no email with the subject ${p.subject}`);
    yield* a.call("mail", "forward_email", {
      access_token: token,
      email_id: mail.email_id,
      recipients: [email],
    });
    yield* a.finish();
  },
};

export const COMMS_TEMPLATES: TaskTemplate[] = [
  textRelationship,
  mailSendContact,
  mailCountFrom,
  mailReplyLatest,
  mailForwardTo,
];
