import { addDays } from "../../apps/common";
import { CATEGORIES } from "../../apps/shop";
import { canonical, insert, removeRow, table } from "../../db";
import type { Rng } from "../../rng";
import type { Json, JsonObject, Row } from "../../types";
import type { World } from "../../world";
import { ScriptError } from "../actor";
import { added, allowUpdates, sameAmount, updated } from "../expect";
import type { TaskTemplate, TemplateInstance } from "../types";
import {
  contactEmail,
  contactsWith,
  fullName,
  inboxCopies,
  minuteStamp,
  money,
  ownedRows,
  peopleWith,
  sentEmail,
  variantPick,
} from "./helpers";

/** Templates for errands: files, shopping and scheduling. */

/** Receipt vendors and their categories: the seed's seven, plus a second vendor per category. */
const VENDORS: [vendor: string, category: string][] = [
  ["Green Grocer", "groceries"],
  ["City Pharmacy", "pharmacy"],
  ["Blue Bottle Cafe", "coffee"],
  ["Hardware Hub", "hardware"],
  ["Metro Electronics", "electronics"],
  ["Page Turner Books", "books"],
  ["Fuel Stop", "gas"],
  ["Corner Market", "groceries"],
  ["Wellness Drugstore", "pharmacy"],
  ["Morning Grind", "coffee"],
  ["Toolbox Depot", "hardware"],
  ["Gadget Garage", "electronics"],
  ["Second Chapter", "books"],
  ["Quick Gas", "gas"],
];

/** How receipt file names spell a vendor (as the files seed does). */
function slug(vendor: string): string {
  return vendor.toLowerCase().replace(/\s+/g, "_");
}

/** A line "Key: value" of a file's content, or null. */
function field(content: string, key: string): string | null {
  const line = content.split("\n").find((l) => l.startsWith(`${key}: `));
  return line ? line.slice(key.length + 2).trim() : null;
}

/** An offset that makes the scenario's variants pick different items from a short list. */
function spread(world: World, variant: number, length: number): number {
  return (world.seed + variant) % length;
}

/** Adds one receipt file at a free path; returns its total. */
function addReceipt(world: World, rng: Rng, vendor: string, category: string): number {
  const taken = new Set(ownedRows(world, "files").map((r) => r.path as string));
  let days = rng.int(1, 60);
  while (taken.has(`/receipts/${addDays(world.today, -days)}_${slug(vendor)}.txt`)) days++;
  const date = addDays(world.today, -days);
  const total = rng.int(500, category === "electronics" ? 40000 : 12000) / 100;
  const content = `Vendor: ${vendor}\nDate: ${date}\nCategory: ${category}\nItems: ${rng.int(1, 9)}\nTotal: ${total.toFixed(2)}`;
  insert(world.db, "files", {
    owner: world.user.email,
    path: `/receipts/${date}_${slug(vendor)}.txt`,
    content,
    size: content.length,
    created_at: minuteStamp(date, rng.int(8, 21), rng.int(0, 59)),
  });
  return total;
}

/** The sum of the Total lines of the user's receipts that satisfy `pred`, to the cent. */
function receiptsTotal(world: World, pred: (content: string) => boolean): number {
  const cents = ownedRows(world, "files")
    .filter((r) => (r.path as string).startsWith("/receipts/") && pred(r.content as string))
    .reduce((s, r) => s + Math.round(Number(field(r.content as string, "Total")) * 100), 0);
  return cents / 100;
}

/** files_receipt_total: sum the receipts of one vendor (or one category), reading each file. */
export const filesReceiptTotal: TaskTemplate = {
  id: "files_receipt_total",
  difficulty: 3,
  apps: ["files"],
  build(world, rng, variant): TemplateInstance {
    const byCategory = variant === 1;
    const [vendor, category] = VENDORS[
      (spread(world, variant, VENDORS.length) * 5) % VENDORS.length
    ] as [string, string];
    const sibling = VENDORS.find(([v, c]) => c === category && v !== vendor)?.[0] ?? vendor;
    // The target gets several receipts; the other vendor of its category one or two (a
    // distractor for a vendor question, part of the answer for a category question); others a few.
    for (let i = rng.int(2, 4); i > 0; i--) addReceipt(world, rng, vendor, category);
    for (let i = rng.int(1, 2); i > 0; i--) addReceipt(world, rng, sibling, category);
    for (const [v, c] of rng.sample(
      VENDORS.filter(([, c]) => c !== category),
      rng.int(2, 3),
    ))
      addReceipt(world, rng, v, c);
    if (byCategory) {
      const total = receiptsTotal(world, (c) => field(c, "Category") === category);
      return {
        instruction: `What is the total of all my receipts with category "${category}" in /receipts? Answer with a number.`,
        params: { category },
        expect: { changes: [], answer: total },
      };
    }
    const total = receiptsTotal(world, (c) => field(c, "Vendor") === vendor);
    return {
      instruction: `What is the total of all my receipts from ${vendor} in /receipts? Answer with a number.`,
      params: { vendor },
      expect: { changes: [], answer: total },
    };
  },
  *solve(a, p) {
    const token = yield* a.login("files");
    const listing = yield* a.pages("files", "list_directory", {
      access_token: token,
      directory: "/receipts",
    });
    const vendor = p.vendor as string | undefined;
    const candidates = listing.filter(
      (f) => f.type !== "directory" && (!vendor || String(f.path).includes(slug(vendor))),
    );
    let cents = 0;
    for (const f of candidates) {
      const file = (yield* a.call("files", "show_file", {
        access_token: token,
        path: f.path as string,
      })) as JsonObject;
      const content = String(file.content);
      const matches = vendor
        ? field(content, "Vendor") === vendor
        : field(content, "Category") === p.category;
      if (matches) cents += Math.round(Number(field(content, "Total")) * 100);
    }
    yield* a.finish(cents / 100);
  },
};

const ARCHIVES = ["/archive", "/backup", "/old_files", "/documents/archive", "/shared"];

/** files_move: move one file to a new folder; the row keeps its content, only its path changes. */
export const filesMove: TaskTemplate = {
  id: "files_move",
  difficulty: 1,
  apps: ["files"],
  build(world, rng, variant) {
    let candidates = ownedRows(world, "files").filter(
      (r) => !(r.path as string).startsWith("/receipts/"),
    );
    if (candidates.length === 0) {
      const content = "Notes\n- call the landlord\n- renew the passport";
      insert(world.db, "files", {
        owner: world.user.email,
        path: "/documents/notes.txt",
        content,
        size: content.length,
        created_at: minuteStamp(addDays(world.today, -rng.int(2, 30)), 10, 0),
      });
      candidates = ownedRows(world, "files");
    }
    const file = rng.shuffle(candidates)[variant % candidates.length] as Row;
    const path = file.path as string;
    const base = path.slice(path.lastIndexOf("/") + 1);
    const folder = ARCHIVES[spread(world, variant, ARCHIVES.length)] as string;
    const newPath = `${folder}/${base}`;
    const owner = world.user.email;
    return {
      instruction: `Move the file ${path} to ${newPath}.`,
      params: { path, new_path: newPath },
      expect: {
        changes: [
          updated(
            `moved ${path} to ${newPath}`,
            "files",
            file.id,
            (after, before) =>
              after.path === newPath && after.owner === owner && after.content === before.content,
            ["path"],
          ),
        ],
      },
    };
  },
  *solve(a, p) {
    const token = yield* a.login("files");
    yield* a.call("files", "move_file", {
      access_token: token,
      path: p.path as string,
      new_path: p.new_path as string,
    });
    yield* a.finish();
  },
};

const LIST_RELATIONSHIPS = ["coworker", "friend", "neighbor", "classmate"];
const LIST_NAMES = ["phone_list", "numbers", "contacts", "phones"];

function byFirstName(a: Row | JsonObject, b: Row | JsonObject): number {
  return String(a.first_name).localeCompare(String(b.first_name));
}

function phoneLines(contacts: (Row | JsonObject)[]): string {
  return contacts
    .slice()
    .sort(byFirstName)
    .map((c) => `${c.first_name} ${c.last_name}: ${c.phone}`)
    .join("\n");
}

/** files_create_list: a file of the phone numbers of one relationship's contacts (all pages). */
export const filesCreateList: TaskTemplate = {
  id: "files_create_list",
  difficulty: 2,
  apps: ["files", "phone"],
  build(world, rng, variant) {
    // Coworkers and friends span pages; neighbors and classmates fit on one.
    const first = spread(world, 0, 2);
    const index = variant === 2 ? 2 + rng.int(0, 1) : (first + variant) % 2;
    const relationship = LIST_RELATIONSHIPS[index] as string;
    const contacts = table(world.db, "contacts").filter(
      (c) => c.owner === world.user.phone && c.relationship === relationship,
    );
    const path = `/documents/${relationship}_${rng.pick(LIST_NAMES)}.txt`;
    const content = phoneLines(contacts);
    const owner = world.user.email;
    return {
      instruction: `Create a file ${path} listing the phone numbers of my ${relationship}s, one per line as "First Last: number", sorted by first name.`,
      params: { path, relationship },
      expect: {
        changes: [
          added(
            `created ${path} with ${contacts.length} ${relationship}s' numbers`,
            "files",
            (r) =>
              r.owner === owner &&
              r.path === path &&
              typeof r.content === "string" &&
              r.content.trimEnd() === content,
          ),
        ],
      },
    };
  },
  *solve(a, p) {
    const contacts = yield* contactsWith(a, p.relationship as string);
    if (contacts.length === 0) throw new ScriptError(`no ${p.relationship} contacts`);
    const token = yield* a.login("files");
    yield* a.call("files", "create_file", {
      access_token: token,
      path: p.path as string,
      content: phoneLines(contacts),
    });
    yield* a.finish();
  },
};

/** Makes the cheapest in-stock product of a category unique: out-of-stock ones first, no tie. */
function stageCategory(world: World, rng: Rng, category: string): Row {
  const products = table(world.db, "products")
    .filter((p) => p.category === category)
    .sort((a, b) => (a.price as number) - (b.price as number) || a.id - b.id);
  const soldOut = rng.int(1, 5);
  products.forEach((p, i) => {
    if (i < soldOut) p.stock = 0;
    else if ((p.stock as number) < 1) p.stock = rng.int(2, 20);
  });
  const target = products[soldOut] as Row;
  for (const p of products.slice(soldOut + 1))
    if ((p.price as number) <= (target.price as number))
      p.price = money((target.price as number) + rng.int(1, 5));
  return target;
}

/** shop_buy_cheapest: look past out-of-stock products for the cheapest one in stock, buy it. */
export const shopBuyCheapest: TaskTemplate = {
  id: "shop_buy_cheapest",
  difficulty: 2,
  apps: ["shop"],
  build(world, rng, variant) {
    const category = CATEGORIES[spread(world, variant, CATEGORIES.length)] as string;
    const owner = world.user.email;
    for (const c of ownedRows(world, "cart_items")) removeRow(world.db, "cart_items", c.id);
    const target = stageCategory(world, rng, category);
    const card = rng.pick(table(world.db, "cards"));
    const price = target.price as number;
    const items = canonical([
      { product_id: target.id, name: target.name as string, quantity: 1, price },
    ]);
    const cardName = card.name as string;
    return {
      instruction: `Buy the cheapest product in the ${category} category that is in stock, paying with my ${cardName} card.`,
      params: { category, card: cardName },
      expect: {
        changes: [
          added(
            `bought one ${target.name} for ${price} with card ${card.id}`,
            "orders",
            (r) =>
              r.owner === owner &&
              r.status === "placed" &&
              r.card_id === card.id &&
              sameAmount(r.total, price) &&
              canonical(r.items as Json) === items,
          ),
        ],
        allow: allowUpdates("products", [target.id], ["stock"]),
      },
    };
  },
  *solve(a, p) {
    const token = yield* a.login("shop");
    const products = yield* a.pages("shop", "search_products", {
      access_token: token,
      category: p.category as string,
    });
    products.sort((x, y) => (x.price as number) - (y.price as number));
    let choice: JsonObject | undefined;
    for (const item of products) {
      const shown = (yield* a.call("shop", "show_product", {
        access_token: token,
        product_id: item.product_id as number,
      })) as JsonObject;
      if ((shown.stock as number) > 0) {
        choice = shown;
        break;
      }
    }
    if (!choice) throw new ScriptError(`no ${p.category} product in stock`);
    const cardId = yield* a.recall(1, function* () {
      const cards = (yield* a.call("supervisor", "show_payment_cards")) as JsonObject[];
      const card = cards.find((c) => c.name === p.card);
      if (!card) throw new ScriptError(`no ${p.card} card`);
      return card.card_id as number;
    });
    yield* a.call("shop", "add_to_cart", {
      access_token: token,
      product_id: choice.product_id as number,
      quantity: 1,
    });
    yield* a.call("shop", "checkout", { access_token: token, payment_card_id: cardId });
    yield* a.finish();
  },
};

/** A timestamp strictly between `after` and `before` (minutes) that no order uses yet. */
function freeStamp(rng: Rng, after: string, before: string, used: Set<string>): string {
  const start = Date.parse(`${after}:00Z`);
  const span = Math.floor((Date.parse(`${before}:00Z`) - start) / 60000);
  for (;;) {
    const stamp = new Date(start + rng.int(1, span - 1) * 60000).toISOString().slice(0, 16);
    if (!used.has(stamp)) {
      used.add(stamp);
      return stamp;
    }
  }
}

function addOrder(world: World, rng: Rng, status: string, createdAt: string): Row {
  const cards = table(world.db, "cards");
  const items = rng.sample(table(world.db, "products"), rng.int(1, 3)).map((p) => ({
    product_id: p.id,
    name: p.name as string,
    quantity: rng.chance(0.2) ? 2 : 1,
    price: p.price as number,
  }));
  return insert(world.db, "orders", {
    owner: world.user.email,
    items,
    total: money(items.reduce((s, x) => s + x.price * x.quantity, 0)),
    status,
    card_id: cards.length > 0 ? rng.pick(cards).id : null,
    created_at: createdAt,
  });
}

/**
 * Adds a delivered order after every seeded delivered one, then at least five newer orders that
 * are on their way or returned, so that the latest delivered order is on the second page.
 */
function stageOrders(world: World, rng: Rng): Row {
  const orders = ownedRows(world, "orders");
  const used = new Set(orders.map((o) => o.created_at as string));
  const latest = orders
    .filter((o) => o.status === "delivered")
    .map((o) => o.created_at as string)
    .sort()
    .pop();
  const end = `${world.today}T08:00`;
  const from = latest ?? `${addDays(world.today, -30)}T08:00`;
  const middle = new Date((Date.parse(`${from}:00Z`) + Date.parse(`${end}:00Z`)) / 2)
    .toISOString()
    .slice(0, 16);
  const target = addOrder(world, rng, "delivered", freeStamp(rng, from, middle, used));
  const after = target.created_at as string;
  const newer = orders.filter((o) => String(o.created_at) > after).length;
  for (let i = Math.max(5 - newer, 0) + rng.int(0, 2); i > 0; i--)
    addOrder(world, rng, rng.chance(0.6) ? "placed" : "returned", freeStamp(rng, after, end, used));
  return target;
}

/** shop_return_latest: page past recent undelivered orders to return the latest delivered one. */
export const shopReturnLatest: TaskTemplate = {
  id: "shop_return_latest",
  difficulty: 2,
  apps: ["shop"],
  build(world, rng) {
    const target = stageOrders(world, rng);
    const productIds = (target.items as JsonObject[]).map((i) => i.product_id as number);
    return {
      instruction: rng.pick([
        "Return my most recent delivered order.",
        "Please return my most recent delivered shop order.",
        "Return the most recent of my orders that has been delivered.",
      ]),
      params: {},
      expect: {
        changes: [
          updated(
            `returned order ${target.id}`,
            "orders",
            target.id,
            (after) => after.status === "returned",
            ["status"],
          ),
        ],
        allow: allowUpdates("products", productIds, ["stock"]),
      },
    };
  },
  *solve(a) {
    const token = yield* a.login("shop");
    const orders = yield* a.pages("shop", "show_orders", { access_token: token });
    const latest = orders
      .filter((o) => o.status === "delivered")
      .sort((x, y) => String(y.created_at).localeCompare(String(x.created_at)))[0];
    if (!latest) throw new ScriptError("no delivered order");
    yield* a.call("shop", "return_order", {
      access_token: token,
      order_id: latest.order_id as number,
    });
    yield* a.finish();
  },
};

const MEETINGS = [
  "Design review",
  "Budget planning",
  "Sprint planning",
  "Roadmap sync",
  "Interview debrief",
  "Launch prep",
  "Customer call prep",
  "Hiring sync",
];
const SLOTS = ["09:00", "09:30", "10:00", "11:00", "11:30", "13:00", "14:00", "15:30", "16:00"];
const DURATIONS = [15, 30, 45, 60, 90];

/** calendar_meeting_with: create an event inviting a coworker, their email from contacts. */
export const calendarMeetingWith: TaskTemplate = {
  id: "calendar_meeting_with",
  difficulty: 2,
  apps: ["calendar", "phone"],
  build(world, rng, variant) {
    const person = variantPick(
      world,
      peopleWith(world, ["coworker"]),
      variant,
      "calendar_meeting_with",
    );
    const name = fullName(person);
    const title = MEETINGS[(spread(world, variant, MEETINGS.length) * 3) % MEETINGS.length];
    const date = addDays(world.today, rng.int(1, 21));
    const start = rng.pick(SLOTS);
    const minutes = rng.pick(DURATIONS);
    const owner = world.user.email;
    return {
      instruction: `Schedule "${title}" on ${date} at ${start} for ${minutes} minutes with my ${person.relationship} ${name}.`,
      params: { title: title as string, date, start, minutes, name },
      expect: {
        changes: [
          added(
            `"${title}" on ${date} ${start} (${minutes} min) with ${person.email}`,
            "events",
            (r) =>
              r.owner === owner &&
              r.title === title &&
              r.date === date &&
              r.start === start &&
              r.duration_min === minutes &&
              canonical(r.attendees as Json) === canonical([person.email]) &&
              r.location === "",
          ),
        ],
      },
    };
  },
  *solve(a, p) {
    const email = yield* contactEmail(a, p.name as string);
    const token = yield* a.login("calendar");
    yield* a.call("calendar", "create_event", {
      access_token: token,
      title: p.title as string,
      date: p.date as string,
      start: p.start as string,
      duration_min: p.minutes as number,
      attendees: [email],
    });
    yield* a.finish();
  },
};

/**
 * expense_report (4 apps): add up one vendor's receipts, email the total to a coworker, and log it
 * as a new line of the user's 'Expenses' note.
 */
export const expenseReport: TaskTemplate = {
  id: "expense_report",
  difficulty: 3,
  apps: ["files", "phone", "mail", "notes"],
  build(world, rng, variant): TemplateInstance {
    const [vendor, category] = variantPick(world, VENDORS, variant, "expense_report/vendor");
    const person = variantPick(
      world,
      peopleWith(world, ["manager", "coworker"]),
      variant,
      "expense_report/person",
    );
    for (let i = rng.int(3, 5); i > 0; i--) addReceipt(world, rng, vendor, category);
    for (const [v, c] of rng.sample(
      VENDORS.filter(([v]) => v !== vendor),
      rng.int(3, 5),
    ))
      addReceipt(world, rng, v, c);
    const total = receiptsTotal(world, (c) => field(c, "Vendor") === vendor).toFixed(2);
    const lines = rng.sample(
      VENDORS.filter(([v]) => v !== vendor).map(
        ([v]) => `${v}: ${(rng.int(500, 9000) / 100).toFixed(2)}`,
      ),
      rng.int(1, 3),
    );
    const note = insert(world.db, "notes", {
      owner: world.user.email,
      title: "Expenses",
      content: lines.join("\n"),
      tags: ["money"],
      pinned: false,
      updated_at: minuteStamp(
        addDays(world.today, -rng.int(5, 30)),
        rng.int(8, 21),
        rng.int(0, 59),
      ),
    });
    const name = fullName(person);
    const subject = `Expenses ${vendor}`;
    const content = `${note.content}\n${vendor}: ${total}`;
    return {
      instruction: `Add up my receipts from ${vendor} in /receipts, email the total (like 12.50) to ${name} with the subject "${subject}", and add the line "${vendor}: <total>" to my note 'Expenses'.`,
      params: { vendor, name, subject },
      expect: {
        changes: [
          sentEmail(world, `emailed ${total} to ${person.email}`, [person.email], subject, total),
          updated(
            `'${vendor}: ${total}' added to 'Expenses'`,
            "notes",
            note.id,
            (r) => r.content === content,
            ["content", "updated_at"],
          ),
        ],
        allow: inboxCopies(world, [person.email], subject, total),
      },
    };
  },
  *solve(a, p) {
    const vendor = p.vendor as string;
    const token = yield* a.login("files");
    const listing = yield* a.pages("files", "list_directory", {
      access_token: token,
      directory: "/receipts",
    });
    let cents = 0;
    for (const f of listing.filter(
      (x) => x.type !== "directory" && String(x.path).includes(slug(vendor)),
    )) {
      const file = (yield* a.call("files", "show_file", {
        access_token: token,
        path: f.path as string,
      })) as JsonObject;
      const content = String(file.content);
      if (field(content, "Vendor") === vendor)
        cents += Math.round(Number(field(content, "Total")) * 100);
    }
    const total = (cents / 100).toFixed(2);
    const email = yield* contactEmail(a, p.name as string);
    const mailToken = yield* a.login("mail");
    yield* a.call("mail", "send_email", {
      access_token: mailToken,
      recipients: [email],
      subject: p.subject as string,
      body: total,
    });
    const notesToken = yield* a.login("notes");
    const found = yield* a.pages("notes", "show_notes", {
      access_token: notesToken,
      query: "Expenses",
    });
    const note = found.find((n) => n.title === "Expenses");
    if (!note) throw new ScriptError("no note titled Expenses");
    yield* a.call("notes", "append_to_note", {
      access_token: notesToken,
      note_id: note.note_id ?? null,
      text: `${vendor}: ${total}`,
    });
    yield* a.finish();
  },
};

export const ERRANDS_TEMPLATES: TaskTemplate[] = [
  filesReceiptTotal,
  expenseReport,
  filesMove,
  filesCreateList,
  shopBuyCheapest,
  shopReturnLatest,
  calendarMeetingWith,
];
