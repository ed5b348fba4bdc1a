import { useState } from "react";
import "./app.css";
import { TrainPanel } from "./train/TrainPanel";
import { WorldPanel } from "./world/WorldPanel";

type Tab = "train" | "world";

export function App() {
  const [tab, setTabState] = useState<Tab>(() =>
    new URLSearchParams(location.search).get("tab") === "world" ? "world" : "train",
  );
  // A tab, once opened, stays mounted (hidden when not shown): a hand-played episode or the
  // training views survive a look at the other tab.
  const [opened, setOpened] = useState<Record<Tab, boolean>>({
    train: tab === "train",
    world: tab === "world",
  });
  const setTab = (next: Tab) => {
    const params = new URLSearchParams(location.search);
    if (next === "world") params.set("tab", "world");
    else params.delete("tab");
    const q = params.toString();
    history.replaceState(null, "", `${location.pathname}${q ? `?${q}` : ""}${location.hash}`);
    setTabState(next);
    setOpened((o) => ({ ...o, [next]: true }));
  };
  return (
    <main className="app">
      <header className="app-header">
        <h1 data-testid="app-title">LOOP Playground</h1>
        <span className="tagline">
          an agent learns multi-app tasks with leave-one-out PPO, in your browser
        </span>
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
      {opened.train ? (
        <div hidden={tab !== "train"}>
          <TrainPanel />
        </div>
      ) : null}
      {opened.world ? (
        <div hidden={tab !== "world"}>
          <WorldPanel />
        </div>
      ) : null}
    </main>
  );
}
