import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface Series {
  label: string;
  color: string;
  dash?: boolean;
}

/** A value as the legend and axis show it: three significant digits, however small. */
export function formatValue(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "--";
  if (v === 0) return "0";
  return Math.abs(v) >= 1000 ? v.toFixed(0) : String(Number(v.toPrecision(3)));
}

/** A live line chart (uPlot): x values and one y array per series (null = gap). */
export function Chart(props: {
  testid: string;
  title: string;
  series: Series[];
  x: number[];
  ys: (number | null)[][];
  height?: number;
  yRange?: [number, number];
  /** Said under the chart while it has no points (what will fill it, and when). */
  empty?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const { series, x, ys, height = 150, yRange, title } = props;
  const key = series.map((s) => s.label + s.color + String(s.dash)).join("|");

  // biome-ignore lint/correctness/useExhaustiveDependencies: rebuilt only when the series change
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const opts: uPlot.Options = {
      title,
      width: Math.max(200, el.clientWidth),
      height,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: false }, ...(yRange ? { y: { range: yRange } } : {}) },
      axes: [
        {
          label: "iteration",
          size: 30,
          labelSize: 14,
          incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500],
        },
        { size: 46, values: (_u, splits) => splits.map(formatValue) },
      ],
      series: [
        { label: "iteration" },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          points: { show: true, size: 4 },
          spanGaps: true,
          value: (_u: uPlot, v: number | null) => formatValue(v),
          ...(s.dash ? { dash: [6, 4] } : {}),
        })),
      ],
    };
    const u = new uPlot(opts, [x, ...ys] as uPlot.AlignedData, el);
    plot.current = u;
    const ro = new ResizeObserver(() =>
      u.setSize({ width: Math.max(200, el.clientWidth), height }),
    );
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [key, height, title]);

  useEffect(() => {
    plot.current?.setData([x, ...ys] as uPlot.AlignedData);
  }, [x, ys]);

  return (
    <div className="chart" data-testid={props.testid} data-points={x.length}>
      <div ref={box} />
      {x.length === 0 && props.empty ? <p className="chart-empty">{props.empty}</p> : null}
    </div>
  );
}

/** Bars of a histogram (SVG), e.g. the advantage distribution of this iteration. */
export function Histogram(props: {
  testid: string;
  counts: number[];
  edges: number[];
  title: string;
}) {
  const { counts, edges } = props;
  const max = Math.max(1, ...counts);
  const W = 300;
  const H = 110;
  const bw = W / Math.max(1, counts.length);
  return (
    <figure className="histogram" data-testid={props.testid}>
      <figcaption>{props.title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H + 16}`} role="img" aria-label={props.title}>
        {counts.map((c, i) => (
          <rect
            // biome-ignore lint/suspicious/noArrayIndexKey: fixed bins
            key={i}
            x={i * bw + 1}
            y={H - (H * c) / max}
            width={bw - 2}
            height={(H * c) / max}
            fill={(edges[i] ?? 0) < 0 ? "#d9534f" : "#2e7d32"}
          >
            <title>{`[${(edges[i] ?? 0).toFixed(1)}, ${(edges[i + 1] ?? 0).toFixed(1)}): ${c}`}</title>
          </rect>
        ))}
        <text x={0} y={H + 13} fontSize={10}>
          {edges[0]?.toFixed(1)}
        </text>
        <text x={W / 2 - 4} y={H + 13} fontSize={10}>
          0
        </text>
        <text x={W - 18} y={H + 13} fontSize={10}>
          {edges.at(-1)?.toFixed(1)}
        </text>
      </svg>
    </figure>
  );
}
