import { useTrain } from "./store";

const f2 = (x: number) => x.toFixed(2);

/** The K rollouts of one task of this iteration, their returns, baselines and advantages. */
export function RolloutGroup() {
  const groups = useTrain((s) => s.groups);
  const trajectories = useTrain((s) => s.trajectories);
  const gi = useTrain((s) => s.group);
  const selected = useTrain((s) => s.trajectory);
  const iteration = useTrain((s) => s.rolloutIteration);
  // The settings the shown iteration ran with (the page's may have changed since, until a reset).
  const algo = useTrain((s) => s.run.settings.algo);
  const select = useTrain((s) => s.select);
  const g = groups[gi];
  if (!g)
    return (
      <section className="group" data-testid="rollout-group">
        <h2>Rollout group</h2>
        <p className="muted">
          Press ▶ Play or ▶❘ Step: each iteration samples K rollouts per task.
        </p>
      </section>
    );
  const K = g.rewards.length;
  const j = Math.max(0, g.members.indexOf(selected));
  const others = g.rewards.filter((_, i) => i !== j);
  const r = g.rewards[j] as number;
  const b = g.baselines[j] as number;
  return (
    <section className="group" data-testid="rollout-group">
      <h2>
        Rollout group <span className="muted">iteration {iteration}</span>
      </h2>
      <label>
        task{" "}
        <select
          data-testid="group-select"
          value={gi}
          onChange={(e) => {
            const next = Number(e.target.value);
            select({ group: next, trajectory: groups[next]?.members[0] ?? 0, turn: 0 });
          }}
        >
          {groups.map((gg, i) => (
            <option key={`${gg.taskId}-${gg.members[0]}`} value={i}>
              {gg.taskId} (mean R {f2(gg.rewards.reduce((a, x) => a + x, 0) / gg.rewards.length)})
            </option>
          ))}
        </select>
      </label>
      <p className="instruction">{trajectories[g.members[0] ?? 0]?.instruction}</p>
      <div className="rollouts">
        {g.members.map((m, i) => {
          const t = trajectories[m];
          return (
            <button
              type="button"
              key={m}
              data-testid="rollout-card"
              className={`rollout ${m === selected ? "selected" : ""} ${g.kept[i] ? "" : "filtered"}`}
              onClick={() => {
                select({ trajectory: m, turn: 0 });
                // The player takes the arrow keys next (← → step the turns of this rollout).
                document
                  .querySelector<HTMLElement>('[data-testid="episode-player"]')
                  ?.focus({ preventScroll: true });
              }}
            >
              <span className="k">#{i + 1}</span>
              <span>R = {f2(g.rewards[i] as number)}</span>
              <span>b = {f2(g.baselines[i] as number)}</span>
              <span className={(g.advantages[i] as number) >= 0 ? "pos" : "neg"}>
                A = {f2(g.advantages[i] as number)}
              </span>
              <span className="muted">
                {t?.turns.length ?? 0} turn{t?.turns.length === 1 ? "" : "s"}{" "}
                {t?.success ? "✓" : ""}
              </span>
              {g.kept[i] ? null : <span className="tag">filtered</span>}
            </button>
          );
        })}
      </div>
      <p className="formula" data-testid="group-formula">
        Leave-one-out: A<sub>{j + 1}</sub> = R<sub>{j + 1}</sub> − 1/(K−1) Σ<sub>i≠{j + 1}</sub> R
        <sub>i</sub> = {f2(r)} − ({others.map(f2).join(" + ")})/{K - 1} = {f2(r)} − {f2(b)} ={" "}
        <strong>{f2(r - b)}</strong>
        {algo.startsWith("loop") ? (
          <> · rollouts with |A| &lt; 0.01 are dropped before the update</>
        ) : null}
        {algo !== "loop" &&
        algo !== "rloo" &&
        algo !== "loop-turn" &&
        algo !== "loop-trajectory" ? (
          <>
            {" "}
            · {algo} uses its own advantage: {f2(g.advantages[j] as number)}
          </>
        ) : null}
      </p>
    </section>
  );
}
