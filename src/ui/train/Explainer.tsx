import { useTrain } from "./store";

/** A short guided explanation of LOOP next to the live numbers. */
export function Explainer() {
  // The run in force (the page's settings apply from the next reset).
  const s = useTrain((st) => st.run.settings);
  const last = useTrain((st) => st.metrics.at(-1));
  return (
    <section className="explainer" data-testid="explainer">
      <h2>What is happening</h2>
      <ol>
        <li>
          <strong>Rollouts.</strong> Each iteration picks {s.tasks} tasks{" "}
          {s.pool > 0 && s.pool <= s.tasks
            ? `(the same ${s.pool} every time: a task pool) `
            : s.pool > 0
              ? `(from a pool of ${s.pool}) `
              : "(from the train split) "}
          and lets the agent (a small transformer) try each one <strong>K = {s.k}</strong> times at
          temperature {s.temperature}. An attempt is a dialogue of API calls with the apps; at the
          end unit tests check the apps' state. The reward R is the share of tests passed (0 if the
          agent never calls complete_task).
        </li>
        <li>
          <strong>Leave-one-out advantage.</strong> An attempt is only good or bad compared with the
          others on the same task: A = R − (mean reward of the other K−1 attempts). No critic
          network is needed. Attempts with A ≈ 0 (for instance when all K scored the same) teach
          nothing and are dropped
          {last ? ` (this iteration: ${Math.round(100 * last.filteredShare)}%)` : ""}.
        </li>
        <li>
          <strong>PPO update.</strong> Every token the agent wrote is made more likely if A &gt; 0,
          less if A &lt; 0. The step is clipped: once a token's probability ratio to the sampling
          policy leaves [1 − ε, 1 + ε] (ε = {s.eps}), it stops pushing. The kept rollouts are reused
          for {s.epochs} epochs of minibatches
          {last
            ? last.steps > 0
              ? ` (clip fraction now ${(100 * last.clipFraction).toFixed(1)}%)`
              : " (this iteration: none kept, no update)"
            : ""}
          .
        </li>
        <li>
          <strong>Watch.</strong> Reward and dev success should rise, and in the tasks grid a task's
          row turns green as the agent learns it; the behaviour chart shows what changes: more doc
          lookups, fewer invented argument values, fewer give-ups after an error.
        </li>
      </ol>
    </section>
  );
}
