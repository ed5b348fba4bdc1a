import { WorldSummary } from "./world/WorldSummary";

export function App() {
  return (
    <main style={{ fontFamily: "system-ui, sans-serif", maxWidth: 720, margin: "2rem auto" }}>
      <h1 data-testid="app-title">LOOP Playground</h1>
      <p>
        Train reinforcement-learning agents in your browser. The playground is under construction;
        the world the agent will live in is ready.
      </p>
      <WorldSummary />
    </main>
  );
}
