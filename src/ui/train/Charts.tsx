import { useMemo } from "react";
import type { IterationMetrics } from "../../rl/trainer";
import { Chart, Histogram } from "./Chart";
import { useTrain } from "./store";

/** An iteration that trained nothing (every group flat) has no loss, entropy or training speed: a gap, not 0. */
const trained =
  (f: (m: IterationMetrics) => number) =>
  (m: IterationMetrics): number | null =>
    m.steps > 0 ? f(m) : null;

/** Live curves of the run (and of an overlaid run, dashed). */
export function Charts() {
  const metrics = useTrain((s) => s.metrics);
  const evals = useTrain((s) => s.evals);
  const overlay = useTrain((s) => s.overlay);
  const { evalEvery, evalLimit } = useTrain((s) => s.run.settings);
  const d = useMemo(() => {
    const n = Math.max(metrics.length, overlay?.metrics.length ?? 0);
    const x = Array.from({ length: n }, (_, i) => i + 1);
    const at = (ms: typeof metrics, f: (m: (typeof metrics)[number]) => number | null) =>
      x.map((i) => {
        const m = ms.find((mm) => mm.iteration === i);
        return m ? f(m) : null;
      });
    const ex = [
      ...new Set([
        ...evals.map((e) => e.iteration),
        ...(overlay?.evals.map((e) => e.iteration) ?? []),
      ]),
    ].sort((a, b) => a - b);
    const ev = (es: typeof evals, f: (r: (typeof evals)[number]["result"]) => number) =>
      ex.map((i) => {
        const e = es.find((ee) => ee.iteration === i);
        return e ? f(e.result) : null;
      });
    const o = overlay?.metrics ?? [];
    const oe = overlay?.evals ?? [];
    return {
      x,
      reward: [
        at(metrics, (m) => m.meanReward),
        at(metrics, (m) => m.successRate),
        ...(overlay ? [at(o, (m) => m.meanReward)] : []),
      ],
      ex,
      evals: [
        ev(evals, (r) => r.tgc),
        ev(evals, (r) => r.sgc),
        ...(overlay ? [ev(oe, (r) => r.tgc)] : []),
      ],
      loss: [
        at(
          metrics,
          trained((m) => m.policyLoss),
        ),
        at(
          metrics,
          trained((m) => m.clipFraction),
        ),
        at(
          metrics,
          trained((m) => m.approxKl),
        ),
      ],
      entropy: [
        at(
          metrics,
          trained((m) => m.entropy),
        ),
      ],
      speed: [
        at(metrics, (m) => m.sampleTokensPerSecond),
        at(
          metrics,
          trained((m) => m.trainTokensPerSecond),
        ),
      ],
      behaviour: [
        at(metrics, (m) => m.behaviour.docLookupsPerRollout),
        at(metrics, (m) => m.behaviour.assumptionsPerRollout),
        at(metrics, (m) => m.behaviour.giveUpRate),
        at(metrics, (m) => m.behaviour.turnsPerEpisode / 10),
      ],
    };
  }, [metrics, evals, overlay]);
  const last = metrics.at(-1);
  const perIteration = "a point per iteration";
  const overlayName = overlay ? `${overlay.settings.algo} (overlay)` : "";
  return (
    <section className="charts">
      <Chart
        testid="chart-reward"
        title="Mean reward and success (training rollouts)"
        series={[
          { label: "reward", color: "#1565c0" },
          { label: "success", color: "#2e7d32" },
          ...(overlay ? [{ label: `reward, ${overlayName}`, color: "#888", dash: true }] : []),
        ]}
        x={d.x}
        ys={d.reward}
        yRange={[0, 1]}
        empty="a point per iteration once training runs: ▶ Play, or ▶❘ Step for one"
      />
      <Chart
        testid="chart-eval"
        title="Dev TGC and SGC"
        series={[
          { label: "TGC", color: "#6a1b9a" },
          { label: "SGC", color: "#ef6c00" },
          ...(overlay ? [{ label: `TGC, ${overlayName}`, color: "#888", dash: true }] : []),
        ]}
        x={d.ex}
        ys={d.evals}
        yRange={[0, 1]}
        empty={
          evalEvery > 0
            ? `evaluated ${evalEvery === 1 ? "after every iteration" : `every ${evalEvery} iterations`}, on ${evalLimit > 0 ? `the first ${evalLimit} dev task${evalLimit === 1 ? "" : "s"}` : "every dev task"}`
            : "no dev evaluation (eval every = 0)"
        }
      />
      <Chart
        testid="chart-loss"
        title="Policy loss, clip fraction, approx. KL"
        series={[
          { label: "loss", color: "#c62828" },
          { label: "clip frac", color: "#00838f" },
          { label: "KL (k3)", color: "#5d4037" },
        ]}
        x={d.x}
        ys={d.loss}
        empty={perIteration}
      />
      <Chart
        testid="chart-entropy"
        title="Entropy of agent tokens (nats)"
        series={[{ label: "entropy", color: "#283593" }]}
        x={d.x}
        ys={d.entropy}
        empty={perIteration}
      />
      <Chart
        testid="chart-speed"
        title="Tokens per second"
        series={[
          { label: "sampling", color: "#1565c0" },
          { label: "training", color: "#c62828" },
        ]}
        x={d.x}
        ys={d.speed}
        empty={perIteration}
      />
      <Chart
        testid="chart-behaviour"
        title="Behaviour per rollout"
        series={[
          { label: "doc lookups", color: "#2e7d32" },
          { label: "assumptions", color: "#c62828" },
          { label: "give-up rate", color: "#ef6c00" },
          { label: "turns / 10", color: "#455a64" },
        ]}
        x={d.x}
        ys={d.behaviour}
        empty={perIteration}
      />
      <Histogram
        testid="advantage-histogram"
        title={`Advantages of iteration ${last?.iteration ?? "–"} (filtered: ${last ? Math.round(100 * last.filteredShare) : 0}%)`}
        counts={last?.advantage.histogram ?? new Array(20).fill(0)}
        edges={last?.advantage.edges ?? Array.from({ length: 21 }, (_, i) => -1 + i * 0.1)}
      />
    </section>
  );
}
