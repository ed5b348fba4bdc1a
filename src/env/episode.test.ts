import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createEpisode, listTasks, PAGE_SIZE } from ".";
import { registry } from "./apps";
import { ERROR_PREFIX } from "./prompt";

const firstTask = () => listTasks("train")[0]?.id as string;

function passwordOf(ep: ReturnType<typeof createEpisode>, app: string): string {
  const obs = ep.step("supervisor.show_account_passwords()").observation;
  const list = JSON.parse(obs.split("\n")[0] as string) as {
    account_name: string;
    password: string;
  }[];
  return list.find((x) => x.account_name === app)?.password as string;
}

describe("episode", () => {
  it("starts with a prompt holding the instruction, the user, the date and how to act", () => {
    const info = listTasks("train")[0];
    const ep = createEpisode(info?.id as string);
    expect(ep.prompt).toContain(info?.instruction);
    expect(ep.prompt).toMatch(/Today is \d{4}-\d{2}-\d{2}/);
    expect(ep.prompt).toContain("complete_task");
    expect(ep.prompt).toContain("page_index");
  });

  it("answers bad calls with error observations and the task reminder", () => {
    const ep = createEpisode(firstTask());
    for (const action of [
      "nonsense",
      "nope.show()",
      "pay.fly()",
      'pay.show_balance(access_token="bad")',
      "pay.show_balance()",
      'pay.login(username=1, password="x")',
      'pay.login(username="a", password="b", extra=1)',
    ]) {
      const { observation, done } = ep.step(action);
      expect(observation.startsWith(ERROR_PREFIX)).toBe(true);
      expect(observation).toContain(`Task: ${ep.task.instruction}`);
      expect(done).toBe(false);
    }
    expect(ep.turns.every((t) => !t.ok)).toBe(true);
  });

  it("requires a login token, and pages lists", () => {
    const ep = createEpisode(firstTask());
    const password = passwordOf(ep, "phone");
    const phone = /phone (555-\d{4})/.exec(ep.prompt)?.[1];
    const login = ep.step(`phone.login(username="${phone}", password="${password}")`).observation;
    const token = JSON.parse(login.split("\n")[0] as string).access_token as string;
    expect(token).toMatch(/^ph/);
    const pages: unknown[][] = [];
    for (let i = 0; i < 20; i++) {
      const obs = ep.step(
        `phone.search_contacts(access_token="${token}", page_index=${i})`,
      ).observation;
      const items = JSON.parse(obs.split("\n")[0] as string) as unknown[];
      pages.push(items);
      if (items.length === 0) break;
    }
    expect(pages[0]?.length).toBe(PAGE_SIZE);
    expect(pages.length).toBeGreaterThan(3);
    expect(pages.at(-1)).toEqual([]);
    // A token of another app is refused.
    expect(ep.step(`pay.show_balance(access_token="${token}")`).observation).toMatch(
      /Invalid access_token/,
    );
  });

  it("ends on complete_task and refuses further steps", () => {
    const ep = createEpisode(firstTask());
    const r = ep.step("supervisor.complete_task()");
    expect(r.done).toBe(true);
    expect(ep.completed).toBe(true);
    const before = JSON.stringify(ep.db);
    expect(ep.step("supervisor.show_profile()")).toEqual({
      observation: `${ERROR_PREFIX}the episode is over.`,
      done: true,
    });
    expect(JSON.stringify(ep.db)).toBe(before);
  });

  it("ends at the turn budget as a failure", () => {
    const ep = createEpisode(firstTask(), { maxTurns: 3 });
    ep.step("supervisor.show_profile()");
    ep.step("supervisor.show_profile()");
    const last = ep.step("supervisor.show_profile()");
    expect(last.done).toBe(true);
    expect(last.observation).toMatch(/Turn budget exhausted/);
    const ev = ep.evaluate();
    expect(ev.success).toBe(false);
    expect(ev.reward).toBe(0);
    expect(createEpisode(firstTask(), { mode: "eval" }).maxTurns).toBe(50);
    expect(createEpisode(firstTask()).maxTurns).toBe(40);
  });

  it("truncates long observations with a note", () => {
    const ep = createEpisode(firstTask(), { observationLimit: 100 });
    const obs = ep.step("supervisor.show_account_passwords()").observation;
    expect(obs).toMatch(/\.\.\.\[truncated \d+ chars/);
  });

  it("a failed mutating call changes nothing", () => {
    const ep = createEpisode(firstTask());
    const password = passwordOf(ep, "pay");
    const email = /email ([^\s,)]+)/.exec(ep.prompt)?.[1];
    const login = ep.step(`pay.login(username="${email}", password="${password}")`).observation;
    const token = JSON.parse(login.split("\n")[0] as string).access_token as string;
    const before = JSON.stringify(ep.db);
    for (const action of [
      `pay.send_money(access_token="${token}", receiver_email="nobody@x.y", amount=5)`,
      `pay.send_money(access_token="${token}", receiver_email="${email}", amount=5)`,
      `pay.send_money(access_token="${token}", receiver_email="nobody@x.y", amount=-5)`,
      `pay.send_money(access_token="${token}", receiver_email="nobody@x.y", amount=1e12)`,
      `pay.approve_payment_request(access_token="${token}", request_id=99999)`,
    ])
      expect(ep.step(action).observation.startsWith(ERROR_PREFIX)).toBe(true);
    expect(JSON.stringify(ep.db)).toBe(before);
  });

  it("random and adversarial actions never throw, always observe, and change nothing when they fail", () => {
    const apis = registry.list().flatMap((a) => a.apis.map((x) => [a.name, x.name] as const));
    const value = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.integer({ min: -3, max: 100 }),
      fc.double({ noNaN: false }),
      fc.boolean(),
      fc.constant(null),
      fc.constantFrom('"', "\\", "__proto__", "constructor", "[]", "{}", ")"),
    );
    const arg = fc.tuple(
      fc.constantFrom(
        "access_token",
        "page_index",
        "amount",
        "email",
        "query",
        "title",
        "x",
        "__proto__",
      ),
      value,
    );
    const callText = fc
      .tuple(fc.constantFrom(...apis), fc.array(arg, { maxLength: 4 }))
      .map(
        ([[app, api], args]) =>
          `${app}.${api}(${args.map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v) : String(v)}`).join(", ")})`,
      );
    const action = fc.oneof(
      callText,
      fc.string({ maxLength: 80 }),
      callText.map((t) => t.slice(0, -1)),
    );
    fc.assert(
      fc.property(fc.array(action, { minLength: 1, maxLength: 8 }), (actions) => {
        const ep = createEpisode(firstTask());
        for (const a of actions) {
          if (ep.done) break;
          const before = JSON.stringify(ep.db);
          const { observation } = ep.step(a);
          expect(typeof observation).toBe("string");
          expect(observation.length).toBeGreaterThan(0);
          const turn = ep.turns.at(-1);
          if (turn && !turn.ok) expect(JSON.stringify(ep.db)).toBe(before);
        }
        const ev = ep.evaluate();
        expect(ev.reward).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 300 },
    );
  });
});
