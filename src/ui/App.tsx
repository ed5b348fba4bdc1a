import { useState } from "react";
import { WorldPanel } from "./world/WorldPanel";

type Tab = "train" | "world";

export function App() {
  const [tab, setTab] = useState<Tab>(() =>
    new URLSearchParams(location.search).get("tab") === "world" ? "world" : "train",
  );
  return (
    <main className="app">
      <header className="app-header">
        <h1 data-testid="app-title">LOOP Playground</h1>
        <nav>
          <button
            type="button"
            data-testid="tab-train"
            aria-pressed={tab === "train"}
            onClick={() => setTab("train")}
          >
            Training
          </button>
          <button
            type="button"
            data-testid="tab-world"
            aria-pressed={tab === "world"}
            onClick={() => setTab("world")}
          >
            World &amp; play
          </button>
        </nav>
      </header>
      {tab === "world" ? <WorldPanel /> : <p>Training view coming.</p>}
    </main>
  );
}
