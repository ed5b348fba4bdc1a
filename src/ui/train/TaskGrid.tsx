import { useMemo } from "react";
import type { TaskOutcome } from "../../rl/taskOutcomes";
import { useTrain } from "./store";

/** A cell's colour: red (reward 0) through yellow to green (reward 1). */
const shade = (reward: number) => `hsl(${Math.round(120 * reward)}, 70%, 85%)`;

/**
 * Each task over the iterations that played it: successes of its K rollouts, coloured by their
 * mean reward. With a task pool (pool <= tasks per iteration) every iteration replays the same
 * tasks, and a row turning green is the agent learning that task.
 */
export function TaskGrid() {
  const metrics = useTrain((s) => s.metrics);
  const { rows, iterations, once } = useMemo(() => {
    const byTask = new Map<string, Map<number, TaskOutcome>>();
    for (const m of metrics)
      for (const t of m.tasks ?? []) {
        const row = byTask.get(t.taskId) ?? new Map<number, TaskOutcome>();
        row.set(m.iteration, t);
        byTask.set(t.taskId, row);
      }
    const all = [...byTask.entries()];
    const again = all.filter(([, row]) => row.size > 1);
    return {
      // Rows whose progress can be read (played more than once) when there are any.
      rows: again.length > 0 ? again : all,
      once: again.length > 0 ? all.length - again.length : 0,
      iterations: metrics.filter((m) => m.tasks).map((m) => m.iteration),
    };
  }, [metrics]);
  if (rows.length === 0) return null;
  return (
    <section className="task-grid" data-testid="task-grid">
      <h2>
        Tasks over iterations{" "}
        <span className="muted">
          successes of each task's K rollouts, coloured by their mean reward
          {once > 0 ? ` · ${once} tasks played only once not shown` : ""}
        </span>
      </h2>
      <div className="task-grid-scroll">
        <table>
          <thead>
            <tr>
              <th>task</th>
              {iterations.map((i) => (
                <th key={i}>{i}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map(([taskId, row]) => (
              <tr key={taskId} data-testid="task-row">
                <td className="task-id">{taskId}</td>
                {iterations.map((i) => {
                  const t = row.get(i);
                  return t ? (
                    <td
                      key={i}
                      style={{ background: shade(t.meanReward) }}
                      title={`iteration ${i}: mean reward ${t.meanReward.toFixed(2)}, ${t.successes} of ${t.k} succeeded`}
                    >
                      {t.successes}/{t.k}
                    </td>
                  ) : (
                    <td key={i} />
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {once === 0 && rows.every(([, row]) => row.size === 1) ? (
        <p className="muted">
          Each task so far was played once. A task pool of at most the tasks per iteration replays
          the same tasks every iteration, and their rows show the agent learning them.
        </p>
      ) : null}
    </section>
  );
}
