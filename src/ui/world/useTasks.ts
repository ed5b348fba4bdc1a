import { useEffect, useState } from "react";
import { listTasks, SPLITS, type TaskInfo } from "../../env";

let loaded: TaskInfo[] | null = null;

/**
 * Every task of every split. Building them generates a world per scenario (about a second in all),
 * so the splits are built one at a time, yielding to the page in between.
 */
export function useTasks(): { tasks: TaskInfo[]; loading: boolean } {
  const [tasks, setTasks] = useState<TaskInfo[]>(() => loaded ?? []);
  const [loading, setLoading] = useState(loaded === null);
  useEffect(() => {
    if (loaded) return;
    let cancelled = false;
    let timer = 0;
    const acc: TaskInfo[] = [];
    const next = (i: number) => {
      timer = window.setTimeout(() => {
        if (cancelled) return;
        const split = SPLITS[i];
        if (split === undefined) {
          loaded = acc.slice();
          setLoading(false);
          return;
        }
        acc.push(...listTasks(split));
        setTasks(acc.slice());
        next(i + 1);
      }, 0);
    };
    next(0);
    return () => {
      cancelled = true;
      window.clearTimeout(timer);
    };
  }, []);
  return { tasks, loading };
}
