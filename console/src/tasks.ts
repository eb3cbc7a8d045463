// The task list (ListTasks filters and paging) and one task: timeline, cancel, subscribe, push configs.
import { ApiError, get, post, stream } from './api';
import { h, replace, stateChip, when } from './dom';
import { renderParts } from './parts';

const STATES = ['submitted', 'working', 'input_required', 'auth_required', 'completed', 'failed', 'canceled', 'rejected'];

export class TaskList {
  readonly el: HTMLElement;
  private body = h('div', { 'data-testid': 'task-list' });
  private context = h('input', { placeholder: 'context id', 'data-testid': 'filter-context' });
  private state = h(
    'select',
    { 'data-testid': 'filter-state' },
    h('option', { value: '' }, 'any state'),
    STATES.map((s) => h('option', { value: s }, s.replace('_', '-'))),
  );
  private after = h('input', { type: 'datetime-local', step: 1, 'data-testid': 'filter-after', title: 'updated after (your local time)' });
  private size = h('input', { type: 'number', min: 1, max: 100, value: 20, class: 'page-size', 'data-testid': 'page-size', title: 'tasks per page' });
  private tokens: string[] = [''];

  constructor(private open: (taskId: string) => void) {
    const apply = () => {
      this.tokens = [''];
      void this.load();
    };
    this.el = h(
      'section',
      { class: 'tasks' },
      h(
        'form',
        { class: 'filters', onsubmit: (e: Event) => (e.preventDefault(), apply()) },
        this.context,
        this.state,
        h('label', null, 'updated after ', this.after),
        h('label', null, this.size, ' per page'),
        h('button', { class: 'primary', type: 'submit', 'data-testid': 'apply-filters' }, 'List'),
      ),
      this.body,
    );
  }

  private query(): string {
    const q = new URLSearchParams();
    if (this.context.value) q.set('contextId', this.context.value.trim());
    if (this.state.value) q.set('state', this.state.value);
    if (this.after.value) q.set('updatedAfter', new Date(this.after.value).toISOString());
    q.set('pageSize', this.size.value);
    const token = this.tokens[this.tokens.length - 1];
    if (token) q.set('pageToken', token);
    return q.toString();
  }

  async load(): Promise<void> {
    let page: any;
    try {
      page = await get(`api/tasks?${this.query()}`);
    } catch (err) {
      replace(this.body, h('div', { class: 'error' }, `${(err as ApiError).reason}: ${(err as ApiError).message}`));
      return;
    }
    const rows = (page.tasks ?? []).map((t: any) =>
      h(
        'tr',
        { 'data-testid': 'task-row', 'data-task-id': t.id },
        h('td', null, h('a', { href: `#task/${t.id}`, onclick: (e: Event) => (e.preventDefault(), this.open(t.id)) }, h('code', null, t.id))),
        h('td', null, h('code', null, t.contextId)),
        h('td', null, stateChip(t.status?.state)),
        h('td', null, when(t.status?.timestamp)),
      ),
    );
    const page_no = this.tokens.length;
    replace(
      this.body,
      page.fallback ? h('p', { class: 'warn' }, `${page.fallback} — showing the tasks this console has seen.`) : null,
      h('p', { class: 'muted', 'data-testid': 'task-count' }, `page ${page_no} · ${rows.length} of ${page.totalSize ?? rows.length} tasks`),
      h(
        'table',
        { class: 'plain' },
        h('thead', null, h('tr', null, h('th', null, 'task'), h('th', null, 'context'), h('th', null, 'state'), h('th', null, 'updated (UTC)'))),
        h('tbody', null, rows),
      ),
      h(
        'div',
        { class: 'pager' },
        h('button', { disabled: page_no === 1, onclick: () => (this.tokens.pop(), void this.load()) }, '← Previous'),
        h('button', { disabled: !page.nextPageToken, 'data-testid': 'next-page', onclick: () => (this.tokens.push(page.nextPageToken), void this.load()) }, 'Next →'),
      ),
    );
  }
}

function timeline(entries: any[]): HTMLElement {
  return h(
    'ol',
    { class: 'timeline', 'data-testid': 'timeline' },
    entries.map((e) =>
      h(
        'li',
        { class: `tl tl-${e.kind}`, 'data-kind': e.kind },
        h('span', { class: 'at', title: e.source === 'console' ? 'when this console received it' : 'the agent’s timestamp' }, when(e.at) || '—'),
        e.kind === 'status' ? stateChip(e.state) : h('span', { class: 'kind' }, e.kind === 'artifact' ? `artifact ${e.name || e.artifactId}${e.append ? ' (+chunk)' : ''}` : `${e.role ?? 'agent'} message`),
        h('span', { class: 'tl-text' }, e.text ?? ''),
      ),
    ),
  );
}

function pushConfigs(page: any): HTMLElement {
  const configs = page.configs ?? [];
  if (!configs.length) return h('p', { class: 'muted' }, 'No push notification configs.');
  return h(
    'table',
    { class: 'plain', 'data-testid': 'push-configs' },
    h('thead', null, h('tr', null, h('th', null, 'id'), h('th', null, 'webhook'), h('th', null, 'auth'))),
    h(
      'tbody',
      null,
      configs.map((c: any) => h('tr', null, h('td', null, h('code', null, c.id)), h('td', null, c.url), h('td', null, c.authentication?.scheme ?? ''))),
    ),
  );
}

export class TaskDetail {
  readonly el = h('section', { class: 'task-detail', 'data-testid': 'task-detail' });
  private abort: AbortController | null = null;

  constructor(private continueTask: (taskId: string) => void) {}

  close(): void {
    this.abort?.abort();
    this.abort = null;
  }

  async show(taskId: string): Promise<void> {
    this.close();
    replace(this.el, h('p', { class: 'muted' }, `Reading task ${taskId}…`));
    let data: any;
    try {
      data = await get(`api/tasks/${encodeURIComponent(taskId)}`);
    } catch (err) {
      replace(this.el, h('div', { class: 'error' }, `${(err as ApiError).reason}: ${(err as ApiError).message}`));
      return;
    }
    const task = data.task;
    const live = h('div', { class: 'muted', 'data-testid': 'live' });
    const push = h('div', null, h('p', { class: 'muted' }, 'Reading push configs…'));
    replace(
      this.el,
      h(
        'header',
        { class: 'task-head' },
        h('h2', null, 'Task ', h('code', { 'data-testid': 'detail-id' }, task.id)),
        h('span', { 'data-testid': 'detail-state' }, stateChip(task.status?.state)),
      ),
      h('p', { class: 'muted' }, 'context ', h('code', null, task.contextId), ' · updated ', when(task.status?.timestamp)),
      h(
        'div',
        { class: 'actions' },
        h('button', { 'data-testid': 'cancel', onclick: () => void this.cancel(task.id) }, 'Cancel task'),
        h('button', { 'data-testid': 'subscribe', onclick: () => void this.subscribe(task.id, live) }, 'Subscribe'),
        h('button', { class: 'primary', onclick: () => this.continueTask(task.id) }, 'Continue in conversation'),
      ),
      live,
      h('h3', null, 'Timeline'),
      timeline(data.timeline ?? []),
      task.artifacts?.length ? h('h3', null, 'Artifacts') : null,
      (task.artifacts ?? []).map((a: any) => h('div', { class: 'artifact' }, h('div', { class: 'artifact-head' }, h('strong', null, a.name || a.artifactId)), renderParts(a.parts ?? []))),
      h('h3', null, 'Push notification configs'),
      push,
    );
    get(`api/tasks/${encodeURIComponent(task.id)}/push-configs`)
      .then((page) => replace(push, pushConfigs(page)))
      .catch((err: ApiError) => replace(push, h('p', { class: 'muted' }, `${err.reason}: ${err.message}`)));
  }

  private async cancel(taskId: string): Promise<void> {
    try {
      await post(`api/tasks/${encodeURIComponent(taskId)}/cancel`);
    } catch (err) {
      this.el.prepend(h('div', { class: 'error', 'data-testid': 'error' }, `${(err as ApiError).reason}: ${(err as ApiError).message}`));
      return;
    }
    await this.show(taskId);
  }

  private async subscribe(taskId: string, live: HTMLElement): Promise<void> {
    this.close();
    const abort = (this.abort = new AbortController());
    live.textContent = 'Following the task…';
    await stream(
      `api/tasks/${encodeURIComponent(taskId)}/subscribe`,
      { method: 'GET' },
      {
        event: (e) => {
          const status = e.task?.status ?? e.statusUpdate?.status;
          if (status) live.replaceChildren('live: ', stateChip(status.state));
        },
        error: (err) => (live.textContent = `${err.reason}: ${err.message}`),
        end: () => {
          if (!abort.signal.aborted) void this.show(taskId);
        },
      },
      abort.signal,
    );
  }
}
