import { findRow, insert, removeRow } from "../db";
import {
  ApiError,
  type CallContext,
  type Json,
  type JsonObject,
  type Person,
  type Row,
} from "../types";
import {
  type AppModule,
  addDays,
  defineApp,
  loginApi,
  opt,
  owned,
  peopleWith,
  personWith,
  pick,
  req,
  stampDaysAgo,
} from "./common";

const FILE_FIELDS = ["path", "size", "created_at"];
const fileView = (r: Row) => pick(r, FILE_FIELDS);
const FILE_PATH = /^(\/[A-Za-z0-9_.-]+)*\/[A-Za-z0-9_-][A-Za-z0-9_.-]*\.[A-Za-z0-9]+$/;
const DIR_PATH = /^(\/[A-Za-z0-9_.-]+)*\/?$/;

/** A valid file path: starts with /, ends with a file name with an extension. */
function filePath(value: Json, what = "path"): string {
  const path = (value as string).trim();
  if (!FILE_PATH.test(path) || path.split("/").some((part, i) => i > 0 && /^\.+$/.test(part)))
    throw new ApiError(
      `${what} must start with / and end with a file name with an extension, like /documents/report.txt.`,
    );
  return path;
}

/** A directory path without its trailing slash ("" for the root). */
function dirPath(value: Json): string {
  const dir = (value as string).trim();
  if (!DIR_PATH.test(dir) || dir === "")
    throw new ApiError("directory must start with /, like /documents.");
  return dir.endsWith("/") ? dir.slice(0, -1) : dir;
}

function findFile(ctx: CallContext, path: string): Row | undefined {
  return findRow(ctx.db, "files", (r) => r.owner === ctx.user && r.path === path);
}

function getFile(ctx: CallContext, value: Json): Row {
  const path = filePath(value);
  const row = findFile(ctx, path);
  if (!row) throw new ApiError(`No file ${path}.`);
  return row;
}

/** Checks that a new file could live at path: nothing there, and no file in the way of its folders. */
function checkFree(ctx: CallContext, path: string): void {
  if (findFile(ctx, path)) throw new ApiError(`A file ${path} already exists.`);
  const parts = path.split("/");
  for (let i = 2; i < parts.length; i++) {
    const folder = parts.slice(0, i).join("/");
    if (findFile(ctx, folder)) throw new ApiError(`${folder} is a file, not a directory.`);
  }
  if (owned(ctx, "files").some((r) => (r.path as string).startsWith(`${path}/`)))
    throw new ApiError(`${path} is a directory.`);
}

/** Files: the user's documents, photos, receipts and work files; directories are implied by paths. */
export const files: AppModule = {
  spec: defineApp("files", "A file store: directories, text files, receipts, photos.", [
    loginApi("files"),
    {
      name: "list_directory",
      description:
        'What a directory directly contains, sorted by path: files and sub-directories (type "directory").',
      params: [opt("directory", "string", "like /documents; / is the top", "/")],
      returns: '[{path, size, created_at} for files, {path, type: "directory"} for directories]',
      errors: ["no such directory"],
      paged: true,
      handler: (ctx, args) => {
        const dir = dirPath(args.directory);
        const prefix = `${dir}/`;
        const out = new Map<string, JsonObject>();
        for (const r of owned(ctx, "files")) {
          const path = r.path as string;
          if (!path.startsWith(prefix)) continue;
          const rest = path.slice(prefix.length);
          const slash = rest.indexOf("/");
          if (slash < 0) out.set(path, fileView(r));
          else {
            const sub = prefix + rest.slice(0, slash);
            out.set(sub, { path: sub, type: "directory" });
          }
        }
        if (out.size === 0 && dir !== "") {
          if (findFile(ctx, dir)) throw new ApiError(`${dir} is a file; use show_file.`);
          throw new ApiError(`No directory ${dir}.`);
        }
        return [...out.keys()].sort().map((k) => out.get(k) as JsonObject);
      },
    },
    {
      name: "show_file",
      description: "Show a file with its content.",
      params: [req("path", "string", "like /documents/report.txt")],
      returns: "{path, size, created_at, content}",
      errors: ["no such file", "bad path"],
      handler: (ctx, args) => {
        const r = getFile(ctx, args.path);
        return { ...fileView(r), content: r.content as string };
      },
    },
    {
      name: "create_file",
      description: "Create a file; its directories need not exist.",
      params: [req("path", "string", "like /documents/report.txt"), req("content", "string", "")],
      returns: "{path, size, created_at}",
      errors: ["a file exists at path", "bad path"],
      mutates: true,
      handler: (ctx, args) => {
        const path = filePath(args.path);
        checkFree(ctx, path);
        const content = args.content as string;
        const r = insert(ctx.db, "files", {
          owner: ctx.user,
          path,
          content,
          size: content.length,
          created_at: ctx.now,
        });
        return fileView(r);
      },
    },
    {
      name: "append_to_file",
      description: "Add text as a new line at the end of a file.",
      params: [req("path", "string", ""), req("text", "string", "")],
      returns: "{path, size, created_at}",
      errors: ["no such file", "bad path", "empty text"],
      mutates: true,
      handler: (ctx, args) => {
        const r = getFile(ctx, args.path);
        const text = args.text as string;
        if (text === "") throw new ApiError("text must not be empty.");
        const content = r.content as string;
        r.content = content === "" ? text : `${content}\n${text}`;
        r.size = (r.content as string).length;
        return fileView(r);
      },
    },
    {
      name: "move_file",
      description: "Move or rename a file.",
      params: [req("path", "string", ""), req("new_path", "string", "")],
      returns: "{path, size, created_at} at the new path",
      errors: ["no such file", "a file exists at new_path", "bad path"],
      mutates: true,
      handler: (ctx, args) => {
        const r = getFile(ctx, args.path);
        const target = filePath(args.new_path, "new_path");
        if (target === r.path) throw new ApiError("new_path is the same as path.");
        checkFree(ctx, target);
        r.path = target;
        return fileView(r);
      },
    },
    {
      name: "copy_file",
      description: "Copy a file to a new path.",
      params: [req("path", "string", ""), req("new_path", "string", "")],
      returns: "{path, size, created_at} of the copy",
      errors: ["no such file", "a file exists at new_path", "bad path"],
      mutates: true,
      handler: (ctx, args) => {
        const r = getFile(ctx, args.path);
        const target = filePath(args.new_path, "new_path");
        checkFree(ctx, target);
        const copy = insert(ctx.db, "files", {
          owner: ctx.user,
          path: target,
          content: r.content as string,
          size: r.size as number,
          created_at: ctx.now,
        });
        return fileView(copy);
      },
    },
    {
      name: "delete_file",
      description: "Delete a file.",
      params: [req("path", "string", "")],
      returns: "a confirmation",
      errors: ["no such file", "bad path"],
      mutates: true,
      handler: (ctx, args) => {
        const r = getFile(ctx, args.path);
        removeRow(ctx.db, "files", r.id);
        return `File ${r.path} deleted.`;
      },
    },
  ]),
  seed: ({ db, user, people, today, rng }) => {
    const manager = personWith(people, rng, "manager");
    const roommate = personWith(people, rng, "roommate");
    const partner = personWith(people, rng, "partner");
    const coworkers = peopleWith(people, rng, "coworker", 2);
    const cw = (i: number) => coworkers[i] ?? manager;
    const friend = personWith(people, rng, "friend");
    const name = (p: Person) => `${p.first_name} ${p.last_name}`;
    const money = (lo: number, hi: number) => (rng.int(lo * 100, hi * 100) / 100).toFixed(2);

    const entries: [path: string, content: string, days: number][] = [];
    const add = (path: string, content: string, days: number) =>
      entries.push([path, content, days]);

    add(
      "/documents/resume.txt",
      `${name(user)}\n${user.email} | ${user.phone} | ${user.city}\nExperience: ${rng.int(3, 12)} years in product development.`,
      rng.int(60, 200),
    );
    const rent = rng.int(110, 190) * 10;
    add(
      "/documents/lease_agreement.txt",
      `Lease for apartment in ${user.city}\nTenants: ${name(user)}, ${name(roommate)}\nMonthly rent: ${rent}.00\nStart: ${addDays(today, -rng.int(100, 300))}, 12 months.`,
      rng.int(100, 300),
    );
    add(
      "/documents/insurance_policy.txt",
      `Renters insurance\nPolicy number: RI-${rng.int(100000, 999999)}\nAnnual premium: ${money(120, 300)}`,
      rng.int(40, 150),
    );
    add(
      "/documents/tax_return_2025.txt",
      `Tax return 2025\nIncome: ${rng.int(55, 140) * 1000}.00\nRefund: ${money(200, 1500)}`,
      rng.int(20, 60),
    );
    add(
      "/documents/car_registration.txt",
      `Vehicle registration\nOwner: ${name(user)}\nPlate: ${String.fromCharCode(65 + rng.int(0, 25))}${rng.int(100, 999)}-${rng.int(1000, 9999)}\nExpires: ${addDays(today, rng.int(20, 200))}`,
      rng.int(100, 300),
    );
    add(
      "/documents/emergency_contacts.txt",
      `${name(partner)}: ${partner.phone}\n${name(roommate)}: ${roommate.phone}\n${name(friend)}: ${friend.phone}`,
      rng.int(30, 200),
    );
    add(
      "/documents/recipes/lasagna.txt",
      "Lasagna\n12 sheets pasta, 500 g minced beef, 1 jar tomato sauce, 250 g ricotta, 200 g mozzarella\nBake 45 min at 190 C.",
      rng.int(10, 90),
    );
    add(
      "/documents/recipes/banana_bread.txt",
      "Banana bread\n3 ripe bananas, 80 g butter, 150 g sugar, 1 egg, 190 g flour, 1 tsp baking soda\nBake 60 min at 175 C.",
      rng.int(10, 90),
    );

    const photoScenes = rng.sample(
      [
        `beach_with_${partner.first_name.toLowerCase()}.jpg|Photo: sunset at the beach with ${name(partner)}.`,
        `birthday_party.jpg|Photo: birthday party at ${friend.first_name}'s place.`,
        `hike_summit.jpg|Photo: the summit after a ${rng.int(5, 14)}-mile hike.`,
        "cat_on_sofa.jpg|Photo: the cat sleeping on the sofa.",
        `team_dinner.jpg|Photo: team dinner with ${cw(0).first_name} and ${cw(1).first_name}.`,
        "city_skyline.png|Photo: the city skyline at night.",
        "new_apartment.jpg|Photo: the living room of the new apartment.",
      ],
      6,
    );
    for (const s of photoScenes) {
      const [file, desc] = s.split("|") as [string, string];
      add(`/photos/${file}`, `${desc}\nResolution: 4032x3024`, rng.int(1, 120));
    }

    const vendors = rng.sample(
      [
        ["Green Grocer", "groceries"],
        ["City Pharmacy", "pharmacy"],
        ["Blue Bottle Cafe", "coffee"],
        ["Hardware Hub", "hardware"],
        ["Metro Electronics", "electronics"],
        ["Page Turner Books", "books"],
        ["Fuel Stop", "gas"],
      ],
      6,
    );
    for (const [vendor, kind] of vendors) {
      const days = rng.int(1, 45);
      const date = addDays(today, -days);
      const slug = (vendor as string).toLowerCase().replace(/\s+/g, "_");
      const total = money(kind === "electronics" ? 60 : 5, kind === "electronics" ? 400 : 120);
      add(
        `/receipts/${date}_${slug}.txt`,
        `Vendor: ${vendor}\nDate: ${date}\nCategory: ${kind}\nItems: ${rng.int(1, 9)}\nTotal: ${total}`,
        days,
      );
    }

    add(
      "/work/quarterly_report_draft.txt",
      `Quarterly report (draft)\nAuthor: ${name(user)}\nReviewer: ${name(manager)}\nRevenue: ${rng.int(200, 900)}k, growth ${rng.int(2, 18)}%.`,
      rng.int(1, 5),
    );
    add(
      "/work/meeting_notes.txt",
      `Weekly sync\nAttendees: ${name(manager)}, ${name(cw(0))}, ${name(cw(1))}\nAction: ${cw(0).first_name} prepares the demo.`,
      rng.int(2, 10),
    );
    add(
      "/work/offsite_budget.csv",
      `item,cost\nvenue,${rng.int(8, 20) * 100}\ncatering,${rng.int(4, 12) * 100}\ntransport,${rng.int(2, 6) * 100}`,
      rng.int(3, 12),
    );
    add(
      "/work/todo_for_launch.txt",
      "Launch checklist\n- final QA\n- update docs\n- announce in newsletter",
      rng.int(1, 15),
    );

    for (const [path, content, days] of entries.sort((a, b) => b[2] - a[2]))
      insert(db, "files", {
        owner: user.email,
        path,
        content,
        size: content.length,
        created_at: stampDaysAgo(today, rng, days, [7, 22]),
      });
  },
};
