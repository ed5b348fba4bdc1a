import { type Colouring, useTrain } from "./store";

function colour(mode: Colouring, logprob: number, advantage: number): string {
  if (mode === "advantage") {
    const a = Math.max(-1, Math.min(1, advantage));
    return a >= 0 ? `rgba(46,125,50,${0.15 + 0.6 * a})` : `rgba(198,40,40,${0.15 + 0.6 * -a})`;
  }
  // log-prob: confident tokens pale, surprising ones red.
  const p = Math.exp(logprob);
  return `rgba(198,40,40,${(0.75 * (1 - p)).toFixed(3)})`;
}

/** Step through one episode: action tokens, observations, state changes, and the tests at the end. */
export function EpisodePlayer() {
  const trajectories = useTrain((s) => s.trajectories);
  const index = useTrain((s) => s.trajectory);
  const turn = useTrain((s) => s.turn);
  const colouring = useTrain((s) => s.colouring);
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
                style={{ background: colour(colouring, tk.logprob, t.advantage) }}
                title={`log p = ${tk.logprob.toFixed(3)} (p = ${Math.exp(tk.logprob).toFixed(3)})`}
              >
                {tk.text}
              </span>
            ))}
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
