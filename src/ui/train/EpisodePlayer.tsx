import type { TurnTokenStats } from "../../rl/tokenStats";
import { type Colouring, useTrain } from "./store";

interface TokenQuantities {
  logprob: number;
  advantage: number;
  ratio: number | undefined;
  entropy: number | undefined;
  clipped: boolean | undefined;
}

const red = (alpha: number) => `rgba(198,40,40,${Math.max(0, Math.min(0.8, alpha)).toFixed(3)})`;
const green = (alpha: number) => `rgba(46,125,50,${Math.max(0, Math.min(0.8, alpha)).toFixed(3)})`;

/** The background of one action token under the chosen colouring. */
function colour(mode: Colouring, q: TokenQuantities): string {
  switch (mode) {
    case "advantage": {
      const a = Math.max(-1, Math.min(1, q.advantage));
      // A = 0 (a flat group's rollout, filtered): no colour, it teaches nothing.
      if (a === 0) return "transparent";
      return a > 0 ? green(0.15 + 0.6 * a) : red(0.15 + 0.6 * -a);
    }
    case "ratio": {
      // Green: the update made the token more likely; red: less likely (|log r| of 0.2 is full colour).
      if (q.ratio === undefined) return "transparent";
      const l = Math.log(q.ratio) / 0.2;
      return l >= 0 ? green(0.8 * l) : red(0.8 * -l);
    }
    case "clipped":
      if (q.clipped === undefined) return "transparent";
      return q.clipped ? "rgba(237,108,2,0.7)" : "transparent";
    case "entropy":
      // Blue by entropy in nats (2 nats and above: full colour).
      return q.entropy === undefined
        ? "transparent"
        : `rgba(21,101,192,${Math.min(0.8, (0.8 * q.entropy) / 2).toFixed(3)})`;
    default:
      // log-prob: confident tokens pale, surprising ones red.
      return red(0.75 * (1 - Math.exp(q.logprob)));
  }
}

function tokenTitle(q: TokenQuantities): string {
  const parts = [`log p = ${q.logprob.toFixed(3)} (p = ${Math.exp(q.logprob).toFixed(3)})`];
  if (q.ratio !== undefined)
    parts.push(`ratio = ${q.ratio.toFixed(3)}${q.clipped ? " (clipped)" : ""}`);
  if (q.entropy !== undefined) parts.push(`entropy = ${q.entropy.toFixed(2)} nats`);
  return parts.join(" · ");
}

const LEGEND: Record<Colouring, string> = {
  logprob: "red = the sampler found the token unlikely",
  advantage: "green = positive advantage, red = negative (the same A for every token of a rollout)",
  ratio: "after this iteration's update: green = more likely than when sampled, red = less",
  clipped: "orange = the PPO clip was active (the token gets no gradient)",
  entropy: "blue = the policy was uncertain at this token (high entropy)",
};

/** Step through one episode: action tokens, observations, state changes, and the tests at the end. */
export function EpisodePlayer() {
  const trajectories = useTrain((s) => s.trajectories);
  const index = useTrain((s) => s.trajectory);
  const turn = useTrain((s) => s.turn);
  const colouring = useTrain((s) => s.colouring);
  const tokenStats = useTrain((s) => s.tokenStats);
  const rolloutIteration = useTrain((s) => s.rolloutIteration);
  const select = useTrain((s) => s.select);
  const t = trajectories[index];
  const n = t?.turns.length ?? 0;
  const go = (i: number) => select({ turn: Math.max(0, Math.min(n - 1, i)) });
  if (!t)
    return (
      <section className="player" data-testid="episode-player">
        <h2>Episode player</h2>
        <p className="muted">No episode yet.</p>
      </section>
    );
  const cur = t.turns[turn];
  const stats: TurnTokenStats | undefined =
    tokenStats && tokenStats.iteration === rolloutIteration
      ? tokenStats.stats[t.index]?.[turn]
      : undefined;
  const quantities = (j: number, logprob: number): TokenQuantities => ({
    logprob,
    advantage: t.advantage,
    ratio: stats?.ratio[j],
    entropy: stats?.entropy[j],
    clipped: stats?.clipped[j],
  });
  const changes = cur?.changes ?? [];
  const last = turn === n - 1;
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: the player takes arrow keys when focused
    <section
      className="player"
      data-testid="episode-player"
      // biome-ignore lint/a11y/noNoninteractiveTabindex: the player takes arrow keys when focused
      tabIndex={0}
      onKeyDown={(e) => {
        if (e.key === "ArrowRight") {
          go(turn + 1);
          e.preventDefault();
        } else if (e.key === "ArrowLeft") {
          go(turn - 1);
          e.preventDefault();
        }
      }}
    >
      <h2>
        Episode player <span className="muted">{t.taskId}</span>
      </h2>
      <div className="player-bar">
        <button
          type="button"
          data-testid="turn-prev"
          disabled={turn === 0}
          onClick={() => go(turn - 1)}
        >
          ◀
        </button>
        <span data-testid="turn-index">
          turn {n ? turn + 1 : 0} / {n}
        </span>
        <button
          type="button"
          data-testid="turn-next"
          disabled={turn >= n - 1}
          onClick={() => go(turn + 1)}
        >
          ▶
        </button>
        <input
          type="range"
          data-testid="turn-slider"
          min={0}
          max={Math.max(0, n - 1)}
          value={turn}
          onChange={(e) => go(Number(e.target.value))}
        />
        <label>
          colour by{" "}
          <select
            data-testid="colour-select"
            value={colouring}
            onChange={(e) => select({ colouring: e.target.value as Colouring })}
          >
            <option value="logprob">sampling log-prob</option>
            <option value="advantage">advantage (this rollout's A)</option>
            <option value="ratio">ratio after the update</option>
            <option value="clipped">clipped or not</option>
            <option value="entropy">entropy</option>
          </select>
        </label>
        <span className="muted">
          R = {t.reward.toFixed(2)} · A = {t.advantage.toFixed(2)} {t.kept ? "" : "· filtered"}
        </span>
      </div>
      {turn === 0 ? (
        <details className="prompt">
          <summary>prompt (first observation)</summary>
          <pre>{t.prompt}</pre>
        </details>
      ) : null}
      {cur ? (
        <div className="turn">
          <div className="label">
            action
            {cur.start > 0 ? (
              <span className="muted"> (context starts at turn {cur.start + 1})</span>
            ) : null}
          </div>
          <div className="tokens" data-testid="action-tokens">
            {cur.tokens.map((tk, i) => (
              <span
                // biome-ignore lint/suspicious/noArrayIndexKey: tokens are positional
                key={i}
                className="tok"
                style={{ background: colour(colouring, quantities(i, tk.logprob)) }}
                title={tokenTitle(quantities(i, tk.logprob))}
              >
                {tk.text}
              </span>
            ))}
          </div>
          <div className="muted legend" data-testid="colour-legend">
            {LEGEND[colouring]}
            {colouring !== "logprob" && colouring !== "advantage" && !stats
              ? " (shown once this iteration's update is done)"
              : ""}
          </div>
          <div className="label">observation</div>
          <pre className="observation" data-testid="observation">
            {cur.observation}
          </pre>
          <div className="label">state changes so far ({changes.length})</div>
          <ul className="changes">
            {changes.slice(0, 12).map((c) => (
              <li key={c}>{c}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {last ? (
        <div className="tests" data-testid="episode-tests">
          <div className="label">unit tests {t.success ? "✓ success" : "✗"}</div>
          <ul>
            {t.tests.map((x) => (
              <li key={x.name} className={x.passed ? "pass" : "fail"}>
                {x.passed ? "✓" : "✗"} {x.name}
                {x.message ? <span className="muted"> — {x.message}</span> : null}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}
