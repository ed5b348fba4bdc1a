import { type Change, describeChange, diffDb } from "./db";
import type { Expectation } from "./tasks/types";
import type { Db, Json } from "./types";

export interface TestResult {
  name: string;
  passed: boolean;
  message?: string;
}

export interface Evaluation {
  tests: TestResult[];
  /** Fraction of tests passed (0 when the episode did not finish): the training reward. */
  reward: number;
  /** All tests passed: the evaluation metric. */
  success: boolean;
}

/** Lower-case, trimmed, without a trailing period or surrounding quotes. */
export function normalizeText(value: string): string {
  return value
    .trim()
    .replace(/^["']|["']$/g, "")
    .replace(/\.$/, "")
    .replace(/\s+/g, " ")
    .toLowerCase();
}

function parseNumber(text: string): number | null {
  const cleaned = text.replace(/[$,\s]/g, "");
  if (!/^-?\d+(\.\d+)?$/.test(cleaned)) return null;
  return Number(cleaned);
}

/** Whether an answer matches the expected one: numbers to the cent, lists as sets, text normalized. */
export function answerMatches(expected: string | number | string[], given: Json): boolean {
  if (given === null || given === undefined) return false;
  const text = typeof given === "string" ? given : JSON.stringify(given);
  if (typeof expected === "number") {
    const n = typeof given === "number" ? given : parseNumber(text);
    return n !== null && Math.abs(n - expected) < 0.005;
  }
  if (Array.isArray(expected)) {
    const items = (Array.isArray(given) ? given.map(String) : text.split(","))
      .map(normalizeText)
      .filter((s) => s !== "");
    const want = expected.map(normalizeText);
    return (
      items.length === want.length &&
      new Set(items).size === items.length &&
      want.every((w) => items.includes(w))
    );
  }
  return normalizeText(text) === normalizeText(expected);
}

function formatExpected(expected: string | number | string[]): string {
  return Array.isArray(expected) ? expected.join(", ") : String(expected);
}

/**
 * AppWorld-style state-based unit tests: diff the database before and after the episode; each
 * requested change must be there exactly once, nothing else may have changed, and the answer must
 * be right where one is asked for.
 */
export function runTests(
  expect: Expectation,
  before: Db,
  after: Db,
  answer: Json,
  completed: boolean,
): Evaluation {
  const changes = diffDb(before, after);
  const used = new Set<Change>();
  const tests: TestResult[] = [];
  for (const want of expect.changes) {
    const hits = changes.filter((c) => want.match(c));
    for (const h of hits) used.add(h);
    if (hits.length === 1) tests.push({ name: want.name, passed: true });
    else
      tests.push({
        name: want.name,
        passed: false,
        message: hits.length === 0 ? "not done" : `done ${hits.length} times, expected once`,
      });
  }
  const extra = changes.filter((c) => !used.has(c) && !(expect.allow?.(c) ?? false));
  tests.push(
    extra.length === 0
      ? { name: "no other changes", passed: true }
      : {
          name: "no other changes",
          passed: false,
          message: `unexpected: ${extra.slice(0, 3).map(describeChange).join("; ")}${extra.length > 3 ? ` (+${extra.length - 3} more)` : ""}`,
        },
  );
  if (expect.answer !== undefined) {
    const ok = answerMatches(expect.answer, answer);
    tests.push({
      name: `answer is ${formatExpected(expect.answer)}`,
      passed: ok,
      ...(ok ? {} : { message: `got ${answer === null ? "no answer" : JSON.stringify(answer)}` }),
    });
  }
  if (!completed)
    tests.push({
      name: "finished with supervisor.complete_task within the turn budget",
      passed: false,
      message: "the episode ended without it (out of turns, or stopped)",
    });
  const passed = tests.filter((t) => t.passed).length;
  const success = completed && passed === tests.length;
  return { tests, reward: completed ? passed / tests.length : 0, success };
}

/** TGC: the share of tasks whose tests all pass. */
export function taskGoalCompletion(results: { success: boolean }[]): number {
  if (results.length === 0) return 0;
  return results.filter((r) => r.success).length / results.length;
}

/**
 * A 95% (z = 1.96) Wilson score interval for a success rate, successes of n trials (Wilson 1927):
 * (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n). For a TGC over a fixed set of tasks with
 * k samples each it is conservative: the variance of the mean, Σ_i p_i(1-p_i) / (n·k) over n
 * tasks, is at most the pooled p(1-p) / (n·k) it assumes.
 */
export function wilsonInterval(successes: number, n: number, z = 1.96): [number, number] {
  if (
    !(Number.isInteger(n) && n >= 0 && Number.isInteger(successes)) ||
    successes < 0 ||
    successes > n
  )
    throw new Error(
      `wilsonInterval needs 0 <= successes <= n (integers), got ${successes} of ${n}`,
    );
  if (n === 0) return [0, 1];
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** SGC: the share of scenarios all of whose tasks pass (over the scenarios present). */
export function scenarioGoalCompletion(
  results: { scenarioId: string; success: boolean }[],
): number {
  const byScenario = new Map<string, boolean>();
  for (const r of results)
    byScenario.set(r.scenarioId, (byScenario.get(r.scenarioId) ?? true) && r.success);
  if (byScenario.size === 0) return 0;
  return [...byScenario.values()].filter(Boolean).length / byScenario.size;
}
