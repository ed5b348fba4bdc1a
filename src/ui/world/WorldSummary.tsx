import { useMemo } from "react";
import { APPS, SPLITS, scenarioPlan, TEMPLATES, VARIANTS, worldFingerprint } from "../../env";

/** A first look at the world: its apps, the task splits, and the seeded world's fingerprint. */
export function WorldSummary() {
  const counts = useMemo(() => {
    const plan = scenarioPlan(TEMPLATES);
    return SPLITS.map((split) => ({
      split,
      tasks: plan.filter((s) => s.split === split).length * VARIANTS,
    }));
  }, []);
  const fingerprint = useMemo(() => worldFingerprint(1), []);
  const apiCount = APPS.reduce((n, a) => n + a.apis.length, 0);
  return (
    <section className="wp-card wp-summary" data-testid="world-summary">
      <header className="wp-card-head">
        <h2>The world</h2>
        <span className="wp-muted">
          seed 1 fingerprint <code data-testid="world-fingerprint">{fingerprint}</code>
        </span>
      </header>
      <p data-testid="world-apps">
        {APPS.length} apps, {apiCount} APIs: {APPS.map((a) => a.name).join(", ")}
      </p>
      <ul className="wp-splits">
        {counts.map((c) => (
          <li key={c.split} data-testid={`split-${c.split}`}>
            {c.split}: {c.tasks} tasks
          </li>
        ))}
        <li>{TEMPLATES.length} templates</li>
      </ul>
    </section>
  );
}
