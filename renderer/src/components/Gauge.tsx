import { formatPercent } from '../lib/format.js';
import type { GaugeModel } from '../lib/gauges.js';

/**
 * A half-ring gauge for a share 0…1 (the connection-hit fraction). The value
 * is always printed as a number too; the arc is a visual aid only.
 */
export function Gauge({ model }: { model: GaugeModel }) {
  const { label, value, caption, empty, outage, notCarrying } = model;
  const r = 52;
  const circumference = Math.PI * r;
  const v = value === null ? 0 : Math.max(0, Math.min(1, value));
  const tone = outage ? 'warning' : notCarrying || value === null ? 'neutral' : v >= 0.9 ? 'good' : v >= 0.7 ? 'caution' : 'warning';
  return (
    <div
      className={`gauge tone-${tone}`}
      role="meter"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      // A meter must have a value (axe: aria-required-attr); with none to show, 0 and the words say why.
      aria-valuenow={value === null ? 0 : Math.round(v * 1000) / 10}
      aria-valuetext={value === null ? empty : formatPercent(value)}
    >
      <svg viewBox="0 0 128 74" aria-hidden="true">
        <path className="gauge-track" d="M 12 66 A 52 52 0 0 1 116 66" />
        {v > 0 && (
        <path
          className="gauge-value"
          d="M 12 66 A 52 52 0 0 1 116 66"
          strokeDasharray={`${circumference * v} ${circumference}`}
        />
        )}
      </svg>
      <div className={`gauge-number${value === null ? ' gauge-empty' : ''}`}>{value === null ? empty : formatPercent(value)}</div>
      <div className="gauge-caption">
        <strong>{label}</strong>
        <span className="muted small">{caption}</span>
      </div>
    </div>
  );
}
