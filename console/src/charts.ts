// Live charts from the target's /metrics (summed up by the console backend):
// requests and errors per binding, task transitions per state, outbox depth.
import { ApiError, get } from './api';
import { h, replace, s } from './dom';

interface Sample {
  at: number;
  data: any;
}

const COLORS = ['#2563eb', '#16a34a', '#d97706', '#dc2626', '#7c3aed', '#0891b2', '#db2777', '#4b5563'];
const KEEP = 120; // samples: 6 minutes at one every 3 s
const W = 420;
const HT = 140;

interface Series {
  name: string;
  values: number[];
}

function axis(v: number): string {
  return v >= 10 || Number.isInteger(v) ? v.toFixed(0) : v.toPrecision(2);
}

function lineChart(title: string, unit: string, series: Series[]): HTMLElement {
  const n = Math.max(2, ...series.map((x) => x.values.length));
  const max = Math.max(0, ...series.flatMap((x) => x.values)) || 1;
  const svg = s('svg', { viewBox: `0 0 ${W} ${HT}`, class: 'chart-svg', role: 'img', 'aria-label': title });
  for (const frac of [0, 0.5, 1]) {
    const y = HT - 16 - frac * (HT - 26);
    svg.append(s('line', { x1: 36, x2: W - 4, y1: y, y2: y, class: 'grid' }));
    svg.append(s('text', { x: 2, y: y + 4, class: 'axis' }, axis(max * frac)));
  }
  series.forEach((x, i) => {
    if (!x.values.length) return;
    const points = x.values
      .map((v, j) => `${36 + ((W - 40) * (j + n - x.values.length)) / (n - 1)},${HT - 16 - (v / max) * (HT - 26)}`)
      .join(' ');
    svg.append(s('polyline', { points, fill: 'none', stroke: COLORS[i % COLORS.length], 'stroke-width': 2 }));
  });
  const legend = h(
    'div',
    { class: 'legend' },
    series.map((x, i) =>
      h('span', { class: `key key-${i % COLORS.length}` }, `${x.name} ${x.values.length ? x.values[x.values.length - 1].toFixed(unit === '' ? 0 : 2) : ''}`),
    ),
  );
  return h('figure', { class: 'chart', 'data-testid': 'chart' }, h('figcaption', null, `${title}${unit ? ` (${unit})` : ''}`), svg, legend);
}

function rates(samples: Sample[], pick: (d: any) => Record<string, number>): Series[] {
  const names = new Set<string>();
  samples.forEach((x) => Object.keys(pick(x.data) ?? {}).forEach((k) => names.add(k)));
  return [...names].sort().map((name) => ({
    name,
    values: samples.slice(1).map((x, i) => {
      const dt = (x.at - samples[i].at) / 1000 || 1;
      return Math.max(0, ((pick(x.data)?.[name] ?? 0) - (pick(samples[i].data)?.[name] ?? 0)) / dt);
    }),
  }));
}

function levels(samples: Sample[], pick: (d: any) => Record<string, number>): Series[] {
  const names = new Set<string>();
  samples.forEach((x) => Object.keys(pick(x.data) ?? {}).forEach((k) => names.add(k)));
  return [...names].sort().map((name) => ({ name, values: samples.map((x) => pick(x.data)?.[name] ?? 0) }));
}

export class Charts {
  readonly el = h('section', { class: 'charts', 'data-testid': 'charts' });
  private samples: Sample[] = [];
  private timer = 0;
  private error = '';

  start(): void {
    if (this.timer) return;
    void this.tick();
    this.timer = window.setInterval(() => void this.tick(), 3000);
  }

  private async tick(): Promise<void> {
    if (document.visibilityState !== 'visible') return; // a tab in the background reads nothing
    try {
      const data = await get('api/metrics');
      this.samples.push({ at: Date.now(), data });
      this.samples = this.samples.slice(-KEEP);
      this.error = '';
    } catch (err) {
      this.error = `${(err as ApiError).reason}: ${(err as ApiError).message}`;
    }
    if (this.el.isConnected) this.render();
  }

  render(): void {
    const last = this.samples[this.samples.length - 1]?.data;
    replace(
      this.el,
      this.error ? h('div', { class: 'error' }, this.error) : null,
      last
        ? h(
            'div',
            { class: 'gauges' },
            h('span', null, 'executions running ', h('strong', null, String(last.executionsActive))),
            h('span', null, 'streams open ', h('strong', null, String(last.streamsOpen))),
            h('span', null, 'tasks created ', h('strong', { 'data-testid': 'tasks-created' }, String(last.created))),
            h('span', null, 'dead letters (total) ', h('strong', null, String(last.deadLetters))),
          )
        : h('p', { class: 'muted' }, 'Waiting for the first scrape of /metrics…'),
      h(
        'div',
        { class: 'chart-grid' },
        lineChart('Requests per binding', 'per second', rates(this.samples, (d) => d.requests)),
        lineChart('Errors per binding', 'per second', rates(this.samples, (d) => d.errors)),
        lineChart('Task state changes', 'per second', rates(this.samples, (d) => d.transitions)),
        lineChart('Push outbox depth', '', levels(this.samples, (d) => d.outbox)),
      ),
      h('p', { class: 'muted' }, `${this.samples.length} scrapes, one every 3 s, kept in this tab.`),
    );
  }
}
