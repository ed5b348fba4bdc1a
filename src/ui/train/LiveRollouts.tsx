import { useTrain } from "./store";

/**
 * The rollouts of the iteration in progress, as the agent plays them: each episode's task, the
 * turns it has taken and its latest action, with how many have finished and the sampling speed.
 * On a CPU the rollouts of an iteration take minutes; this is where one watches the agent act.
 */
export function LiveRollouts() {
  const live = useTrain((s) => s.live);
  const landed = useTrain((s) => s.rolloutIteration);
  const done = useTrain((s) => s.done);
  if (!live) return null;
  const stage =
    landed < live.iteration
      ? ""
      : done < live.iteration
        ? " · all in, now learning from them"
        : " · learned from";
  const rate = live.seconds > 0 ? live.tokens / live.seconds : 0;
  return (
    <section className="live" data-testid="live-rollouts">
      <h2>
        Rollouts of iteration {live.iteration}{" "}
        <span className="muted" data-testid="live-progress">
          {live.finished}/{live.total} episodes finished · {live.tokens.toLocaleString("en")} action
          tokens · {rate.toFixed(0)} tokens/s{stage}
        </span>
      </h2>
      <progress max={live.total} value={live.finished} />
      <div className="live-list">
        {live.episodes
          .filter((e) => e !== undefined)
          .map((e) => (
            <div
              key={e.index}
              className={`live-row ${e.done ? "finished" : ""}`}
              data-testid="live-episode"
            >
              <span className="muted">#{e.index}</span>
              <span>{e.taskId}</span>
              <span className="muted">
                turn {e.turn}
                {e.done ? " · ended" : ""}
              </span>
              <code title={e.action}>{e.action}</code>
            </div>
          ))}
      </div>
    </section>
  );
}
