import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TrainingHost } from "./host";
import { DEFAULT_SETTINGS, type Settings, type WorkerEvent } from "./protocol";

// The host fetches the shipped base (for its vocabulary, even with the tiny preset): served from
// public/ as the page's server would.
beforeAll(() => {
  vi.stubGlobal("fetch", async (url: string) => {
    const file = String(url).endsWith("manifest.json") ? "manifest.json" : "weights.bin";
    const bytes = readFileSync(`public/checkpoints/base/${file}`);
    return {
      ok: true,
      json: async () => JSON.parse(bytes.toString()),
      arrayBuffer: async () =>
        bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    };
  });
});
afterAll(() => {
  vi.unstubAllGlobals();
});

const QUICK: Settings = {
  ...DEFAULT_SETTINGS,
  preset: "tiny",
  backend: "wasm",
  tasks: 2,
  k: 2,
  evalEvery: 0,
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function hosted() {
  const host = new TrainingHost({ checkpointUrl: "/checkpoints/base" });
  const got: { run: string | null; event: WorkerEvent }[] = [];
  host.subscribe((events, run) => {
    for (const event of events) got.push({ run, event });
  });
  const of = <T extends WorkerEvent["type"]>(type: T, run?: string) =>
    got
      .filter((x) => x.event.type === type && (run === undefined || x.run === run))
      .map((x) => x.event as Extract<WorkerEvent, { type: T }>);
  return { host, got, of };
}

describe("the training host (the worker's side)", () => {
  it("steps go through one loop: a second step or a play during a step starts nothing beside it", async () => {
    const { host, of } = hosted();
    await host.reset(QUICK, "a");
    await host.step();
    await host.step();
    await host.play();
    await sleep(50);
    await host.pause();
    await sleep(3000);
    // Iterations one after the other, never two at once: 1, 2, ... in order, each started once.
    const starts = of("iteration-start").map((e) => e.iteration);
    expect(starts.length).toBeGreaterThan(0);
    expect(starts).toEqual(starts.map((_, i) => i + 1));
    const ends = of("iteration").map((e) => e.metrics.iteration);
    expect(ends).toEqual(ends.map((_, i) => i + 1));
    await host.reset(QUICK, "b");
  }, 60_000);

  it("a reset during a step stops it; the new run sees none of the old one's events", async () => {
    const { host, of } = hosted();
    await host.reset(QUICK, "a");
    await host.step();
    await sleep(30);
    await host.reset(QUICK, "b");
    await sleep(500);
    expect(of("iteration", "b")).toHaveLength(0);
    expect(of("status", "b").filter((e) => e.phase === "error")).toHaveLength(0);
    expect(of("status", "b").at(-1)?.phase).toBe("ready");
    // The new run steps as a fresh run: its first iteration is 1.
    await host.step();
    while (of("iteration", "b").length === 0) await sleep(50);
    expect(of("iteration", "b").map((e) => e.metrics.iteration)).toEqual([1]);
    await host.reset(QUICK, "c");
  }, 60_000);

  it("a pause midway through a step, then a reset: the reset goes through", async () => {
    const { host, of } = hosted();
    await host.reset(QUICK, "a");
    await host.step();
    await sleep(30);
    await host.pause();
    await sleep(300);
    await host.reset(QUICK, "b");
    await sleep(50);
    expect(of("status", "b").at(-1)?.phase).toBe("ready");
  }, 60_000);
});
