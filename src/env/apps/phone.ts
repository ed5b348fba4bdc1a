import { findRow, insert, removeRow, table } from "../db";
import { WORDS } from "../names";
import { ApiError, type Row } from "../types";
import {
  type AppModule,
  defineApp,
  deleteOwnedApi,
  getRow,
  loginApi,
  matchesQuery,
  newestFirst,
  nonEmpty,
  opt,
  owned,
  pick,
  req,
  stampDaysAgo,
} from "./common";

const CONTACT_FIELDS = ["contact_id", "first_name", "last_name", "email", "phone", "relationship"];
const contactView = (r: Row) => pick({ ...r, contact_id: r.id }, CONTACT_FIELDS);
const TEXT_FIELDS = ["message_id", "sender", "receiver", "message", "sent_at"];
const textView = (r: Row) => pick({ ...r, message_id: r.id }, TEXT_FIELDS);

/** Phone: the user's contacts and text messages. Username is the phone number. */
export const phone: AppModule = {
  spec: defineApp("phone", "Contacts (name, email, phone, relationship) and text messages.", [
    loginApi("phone", "your phone number"),
    {
      name: "search_contacts",
      description: "Search your contacts by name, email or phone; optionally by relationship.",
      params: [
        opt("query", "string", "text in the name, email or phone", ""),
        opt("relationship", "string", "e.g. roommate, coworker, friend"),
      ],
      returns: `[{${CONTACT_FIELDS.join(", ")}}] sorted by first name`,
      paged: true,
      handler: (ctx, args) =>
        owned(ctx, "contacts")
          .filter((r) =>
            matchesQuery({ ...r, full_name: `${r.first_name} ${r.last_name}` }, args.query, [
              "full_name",
              "email",
              "phone",
            ]),
          )
          .filter((r) => !args.relationship || r.relationship === args.relationship)
          .sort((a, b) => String(a.first_name).localeCompare(String(b.first_name)) || a.id - b.id)
          .map(contactView),
    },
    {
      name: "show_contact",
      description: "Show one contact with birthday and city.",
      params: [req("contact_id", "integer", "")],
      returns: `{${CONTACT_FIELDS.join(", ")}, birthday, city}`,
      errors: ["contact not found"],
      handler: (ctx, args) => {
        const r = getRow(ctx.db, "contacts", args.contact_id as number, "contact", ctx.user);
        return { ...contactView(r), birthday: r.birthday ?? null, city: r.city ?? null };
      },
    },
    {
      name: "add_contact",
      description: "Add a contact.",
      params: [
        req("first_name", "string", ""),
        req("last_name", "string", ""),
        req("phone", "string", "like 555-0123"),
        opt("email", "string", ""),
        opt("relationship", "string", "", "friend"),
      ],
      returns: '{"contact_id": integer}',
      errors: ["a contact with this phone exists", "bad phone number"],
      mutates: true,
      handler: (ctx, args) => {
        const phoneNo = nonEmpty(args.phone, "phone");
        if (!/^555-\d{4}$/.test(phoneNo)) throw new ApiError("phone must look like 555-0123.");
        if (owned(ctx, "contacts").some((c) => c.phone === phoneNo))
          throw new ApiError(`A contact with phone ${phoneNo} already exists.`);
        const row = insert(ctx.db, "contacts", {
          owner: ctx.user,
          first_name: nonEmpty(args.first_name, "first_name"),
          last_name: nonEmpty(args.last_name, "last_name"),
          email: (args.email as string | null) ?? "",
          phone: phoneNo,
          relationship: args.relationship as string,
          birthday: null,
          city: null,
        });
        return { contact_id: row.id };
      },
    },
    {
      name: "update_contact",
      description: "Change fields of a contact; only the fields given change.",
      params: [
        req("contact_id", "integer", ""),
        opt("email", "string", ""),
        opt("phone", "string", ""),
        opt("relationship", "string", ""),
      ],
      returns: "the updated contact",
      errors: ["contact not found", "nothing to update"],
      mutates: true,
      handler: (ctx, args) => {
        const r = getRow(ctx.db, "contacts", args.contact_id as number, "contact", ctx.user);
        const fields = ["email", "phone", "relationship"].filter((f) => args[f] != null);
        if (fields.length === 0)
          throw new ApiError("Give at least one of email, phone, relationship.");
        for (const f of fields) r[f] = nonEmpty(args[f] ?? "", f);
        return contactView(r);
      },
    },
    deleteOwnedApi(
      "delete_contact",
      "Delete a contact.",
      "contacts",
      "contact_id",
      "contact",
      () => "Contact deleted.",
    ),
    {
      name: "send_text_message",
      description: "Send a text message to a phone number.",
      params: [req("phone_number", "string", "like 555-0123"), req("message", "string", "")],
      returns: '{"message_id": integer}',
      errors: ["unknown phone number", "empty message"],
      mutates: true,
      handler: (ctx, args) => {
        const to = args.phone_number as string;
        if (!findRow(ctx.db, "people", (p) => p.phone === to))
          throw new ApiError(`No phone number ${to}.`);
        const row = insert(ctx.db, "texts", {
          sender: ctx.user,
          receiver: to,
          message: nonEmpty(args.message, "message"),
          sent_at: ctx.now,
        });
        return { message_id: row.id };
      },
    },
    {
      name: "show_text_messages",
      description: "Your text messages, newest first; optionally only those with one phone number.",
      params: [opt("phone_number", "string", "the other person's number")],
      returns: `[{${TEXT_FIELDS.join(", ")}}]`,
      paged: true,
      handler: (ctx, args) =>
        newestFirst(
          table(ctx.db, "texts").filter(
            (t) =>
              (t.sender === ctx.user || t.receiver === ctx.user) &&
              (!args.phone_number ||
                t.sender === args.phone_number ||
                t.receiver === args.phone_number),
          ),
          "sent_at",
        ).map(textView),
    },
    {
      name: "delete_text_message",
      description: "Delete one of your text messages.",
      params: [req("message_id", "integer", "")],
      returns: "a confirmation",
      errors: ["message not found"],
      mutates: true,
      handler: (ctx, args) => {
        const t = findRow(
          ctx.db,
          "texts",
          (r) => r.id === args.message_id && (r.sender === ctx.user || r.receiver === ctx.user),
        );
        if (!t) throw new ApiError(`No message with id ${args.message_id}.`);
        removeRow(ctx.db, "texts", t.id);
        return "Message deleted.";
      },
    },
  ]),
  seed: ({ db, user, people, today, rng }) => {
    for (const p of people)
      insert(db, "contacts", {
        owner: user.phone,
        first_name: p.first_name,
        last_name: p.last_name,
        email: p.email,
        phone: p.phone,
        relationship: p.relationship,
        birthday: p.birthday,
        city: p.city,
      });
    for (let i = 0; i < 18; i++) {
      const other = rng.pick(people);
      const incoming = rng.chance(0.5);
      insert(db, "texts", {
        sender: incoming ? other.phone : user.phone,
        receiver: incoming ? user.phone : other.phone,
        message: `${rng.pick(["About", "Re", "Thanks for", "Plans for"])} ${rng.pick(WORDS)}`,
        sent_at: stampDaysAgo(today, rng, [1, 40], [8, 21]),
      });
    }
  },
};
