import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/**
 * A thin React shell over uPlot (canvas): created once per `options`
 * identity, fed new data with setData (cheap), resized with its container.
 * Callers memoise `options` (rebuilding it on a colour-scheme change).
 */
export function UPlotChart({ options, data, label }: { options: Omit<uPlot.Options, 'width' | 'height'>; data: uPlot.AlignedData; label: string }) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef(data);
  latest.current = data;

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    // The plot and its legend (hover values) share the host's height.
    const legendHeight = (): number => el.querySelector<HTMLElement>('.u-legend')?.offsetHeight ?? 0;
    const size = (): { width: number; height: number } => ({ width: Math.max(200, el.clientWidth), height: Math.max(100, el.clientHeight - legendHeight()) });
    const u = new uPlot({ ...options, ...size() }, latest.current, el);
    u.setSize(size());
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize(size()));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [options]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return <div ref={host} className="uplot-host" role="img" aria-label={label} />;
}
