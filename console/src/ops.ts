// Operations: dead letters (retry, drop) and the registry's agents with their health history.
import { ApiError, get, post } from './api';
import { h, replace, when } from './dom';

function problem(err: unknown): HTMLElement {
  const e = err as ApiError;
  return h('div', { class: 'error', 'data-testid': 'error' }, `${e.reason}: ${e.message}`);
}

export class DeadLetterPanel {
  readonly el = h('section', { class: 'panel', 'data-testid': 'dead-letters' });

  async load(): Promise<void> {
    let data: any;
    try {
      data = await get('api/dead-letters');
    } catch (err) {
      replace(this.el, h('h3', null, 'Dead letters'), problem(err));
      return;
    }
    const rows = (data.deadLetters ?? []).map((d: any) =>
      h(
        'tr',
        { 'data-testid': 'dead-letter', 'data-seq': d.seq },
        h('td', null, String(d.seq)),
        h('td', null, h('code', null, d.taskId)),
        h('td', null, h('code', null, d.eventId)),
        h('td', null, String(d.attempts)),
        h('td', null, when(d.lastAttempt)),
        h('td', null, d.error),
        h(
          'td',
          null,
          h(
            'div',
            { class: 'row-actions' },
            h('button', { 'data-testid': `retry-${d.seq}`, onclick: () => void this.act(d.seq, 'retry') }, 'Retry'),
          h('button', { 'data-testid': `drop-${d.seq}`, onclick: () => void this.act(d.seq, 'drop') }, 'Drop'),
          ),
        ),
      ),
    );
    replace(
      this.el,
      h('h3', null, `Dead letters (${rows.length})`, ' ', h('button', { class: 'link', onclick: () => void this.load() }, 'refresh')),
      rows.length
        ? h(
            'table',
            { class: 'plain' },
            h('thead', null, h('tr', null, ['seq', 'task', 'event', 'attempts', 'last attempt (UTC)', 'error', ''].map((c) => h('th', null, c)))),
            h('tbody', null, rows),
          )
        : h('p', { class: 'muted', 'data-testid': 'no-dead-letters' }, 'No dead letters: every push notification was delivered or is still pending.'),
    );
  }

  private async act(seq: number, action: 'retry' | 'drop'): Promise<void> {
    try {
      await post(`api/dead-letters/${seq}/${action}`);
    } catch (err) {
      this.el.append(problem(err));
      return;
    }
    await this.load();
  }
}

function history(points: any[]): HTMLElement {
  return h(
    'span',
    { class: 'health-history', 'data-testid': 'health-history' },
    points.map((p) =>
      h('span', {
        class: `tick ${String(p.health).replace('HEALTH_STATE_', '').toLowerCase()}`,
        title: `${when(p.at)} ${p.health.replace('HEALTH_STATE_', '')}${p.failures ? ` · ${p.failures} failed` : ''}${p.error ? ` · ${p.error}` : ''}`,
      }),
    ),
  );
}

export class RegistryPanel {
  readonly el = h('section', { class: 'panel', 'data-testid': 'registry' });

  async load(): Promise<void> {
    let data: any;
    try {
      data = await get('api/registry');
    } catch (err) {
      replace(this.el, h('h3', null, 'Registry'), problem(err));
      return;
    }
    replace(
      this.el,
      h('h3', null, `Registry ${data.url} (${data.agents.length} agents)`, ' ', h('button', { class: 'link', onclick: () => void this.load() }, 'refresh')),
      data.error ? h('div', { class: 'error' }, data.error) : null,
      h(
        'table',
        { class: 'plain' },
        h('thead', null, h('tr', null, ['agent', 'base URL', 'health', 'last check (UTC)', 'last error', 'history'].map((c) => h('th', null, c)))),
        h(
          'tbody',
          null,
          data.agents.map((a: any) =>
            h(
              'tr',
              { 'data-testid': 'registry-agent' },
              h('td', null, h('strong', null, a.name), h('div', { class: 'muted' }, a.skills.join(', '))),
              h('td', null, h('code', null, a.baseUrl)),
              h('td', null, h('span', { class: `health ${String(a.health ?? 'HEALTH_STATE_UNSPECIFIED').replace('HEALTH_STATE_', '').toLowerCase()}` }, String(a.health ?? 'HEALTH_STATE_UNSPECIFIED').replace('HEALTH_STATE_', '').toLowerCase())),
              h('td', null, when(a.lastCheckTime)),
              h('td', null, a.lastError ?? ''),
              h('td', null, history(a.history ?? [])),
            ),
          ),
        ),
      ),
    );
  }
}
