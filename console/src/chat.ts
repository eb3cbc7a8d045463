// The conversation: messages go to the task they continue (taskId + contextId),
// INPUT_REQUIRED / AUTH_REQUIRED are questions to answer, files can be pasted
// or dropped (a diff becomes a text/x-diff file part), updates stream in live.
import { ApiError, get, stream } from './api';
import { h, INTERRUPTED, replace, stateChip, stateName, TERMINAL } from './dom';
import { renderParts } from './parts';

interface Attachment {
  part: any;
  label: string;
}

const TYPES: Record<string, string> = {
  diff: 'text/x-diff',
  patch: 'text/x-diff',
  py: 'text/x-python',
  json: 'application/json',
  md: 'text/markdown',
  txt: 'text/plain',
};

export function looksLikeDiff(text: string): boolean {
  return /^(diff --git |--- \S[^\n]*\n\+\+\+ \S)/m.test(text) && /^@@ /m.test(text);
}

function base64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 0x8000) out += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(out);
}

export async function filePart(file: File): Promise<any> {
  const ext = file.name.split('.').pop()?.toLowerCase() ?? '';
  const mediaType = TYPES[ext] ?? (file.type || 'application/octet-stream');
  return { raw: base64(new Uint8Array(await file.arrayBuffer())), filename: file.name, mediaType };
}

export class ChatView {
  readonly el: HTMLElement;
  private thread = h('div', { class: 'thread', 'data-testid': 'thread' });
  private input = h('textarea', {
    class: 'composer-input',
    'data-testid': 'composer',
    rows: 6,
    placeholder: 'Write a message, paste a diff, or drop files here…  (Ctrl+Enter sends)',
  });
  private chips = h('div', { class: 'chips', 'data-testid': 'attachments' });
  private sendButton = h('button', { class: 'primary', 'data-testid': 'send' }, 'Send');
  private stopButton = h('button', { 'data-testid': 'stop', hidden: true }, 'Stop following');
  private ids = h('div', { class: 'ids muted', 'data-testid': 'conversation-ids' });
  private hint = h('div', { class: 'hint', 'data-testid': 'composer-hint' });
  private attachments: Attachment[] = [];
  private artifacts = new Map<string, { el: HTMLElement; parts: any[] }>();
  private taskId = '';
  private contextId = '';
  private state = '';
  private abort: AbortController | null = null;

  constructor(private onTaskChanged: (taskId: string) => void = () => {}) {
    const fileInput = h('input', { type: 'file', multiple: true, hidden: true, 'data-testid': 'file-input' });
    fileInput.addEventListener('change', async () => {
      for (const file of Array.from(fileInput.files ?? [])) await this.attachFile(file);
      fileInput.value = '';
    });
    const composer = h(
      'div',
      { class: 'composer', 'data-testid': 'dropzone' },
      this.hint,
      this.input,
      this.chips,
      h(
        'div',
        { class: 'actions' },
        h('button', { onclick: () => fileInput.click() }, 'Attach files…'),
        fileInput,
        h('span', { class: 'spacer' }),
        h('button', { 'data-testid': 'new-conversation', onclick: () => this.reset() }, 'New conversation'),
        this.stopButton,
        this.sendButton,
      ),
    );
    this.wireComposer(composer);
    this.el = h('section', { class: 'chat' }, this.ids, this.thread, composer);
    this.reset();
  }

  private wireComposer(composer: HTMLElement): void {
    this.sendButton.addEventListener('click', () => void this.send());
    this.stopButton.addEventListener('click', () => this.abort?.abort());
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void this.send();
    });
    this.input.addEventListener('paste', (e) => {
      const files = Array.from(e.clipboardData?.files ?? []);
      const text = e.clipboardData?.getData('text/plain') ?? '';
      if (files.length) {
        e.preventDefault();
        files.forEach((f) => void this.attachFile(f));
      } else if (looksLikeDiff(text)) {
        e.preventDefault();
        this.attachText(text, 'pasted.diff', 'text/x-diff');
      }
    });
    composer.addEventListener('dragover', (e) => {
      e.preventDefault();
      composer.classList.add('dragging');
    });
    composer.addEventListener('dragleave', () => composer.classList.remove('dragging'));
    composer.addEventListener('drop', (e) => {
      e.preventDefault();
      composer.classList.remove('dragging');
      Array.from(e.dataTransfer?.files ?? []).forEach((f) => void this.attachFile(f));
    });
  }

  private async attachFile(file: File): Promise<void> {
    const part = await filePart(file);
    this.addAttachment({ part, label: `${file.name} · ${part.mediaType} · ${file.size} bytes` });
  }

  attachText(text: string, filename: string, mediaType: string): void {
    const bytes = new TextEncoder().encode(text);
    this.addAttachment({ part: { raw: base64(bytes), filename, mediaType }, label: `${filename} · ${mediaType} · ${bytes.length} bytes` });
  }

  private addAttachment(item: Attachment): void {
    this.attachments.push(item);
    this.renderChips();
  }

  private renderChips(): void {
    replace(
      this.chips,
      this.attachments.map((a, i) =>
        h(
          'span',
          { class: 'chip', 'data-testid': 'attachment' },
          a.label,
          h('button', { class: 'link', title: 'remove', onclick: () => (this.attachments.splice(i, 1), this.renderChips()) }, '×'),
        ),
      ),
    );
  }

  reset(): void {
    this.abort?.abort();
    this.taskId = this.contextId = this.state = '';
    this.artifacts.clear();
    replace(this.thread, h('p', { class: 'muted empty' }, 'No messages yet. The first message starts a task.'));
    this.update();
  }

  /** Continues an existing task: shows its history, artifacts and status,
   * and follows it live while it runs (SubscribeToTask). */
  async load(taskId: string): Promise<void> {
    this.reset();
    const { task } = await get(`api/tasks/${encodeURIComponent(taskId)}`);
    this.thread.replaceChildren();
    this.taskId = task.id;
    this.contextId = task.contextId;
    this.state = stateName(task.status?.state);
    for (const msg of task.history ?? []) this.bubble(msg.role === 'ROLE_USER' ? 'user' : 'agent', msg.parts ?? []);
    this.status(task.status, false);
    for (const art of task.artifacts ?? []) this.artifact({ artifact: art, append: false });
    this.update();
    if (['submitted', 'working'].includes(this.state)) {
      await this.follow(`api/tasks/${encodeURIComponent(task.id)}/subscribe`, { method: 'GET' });
    }
  }

  private update(): void {
    const asking = INTERRUPTED.includes(this.state);
    const done = TERMINAL.includes(this.state);
    replace(
      this.ids,
      this.taskId ? ['task ', h('code', { 'data-testid': 'task-id' }, this.taskId), ' · context ', h('code', null, this.contextId), ' · ', stateChip(`TASK_STATE_${this.state.toUpperCase().replace('-', '_')}`)] : 'new conversation',
    );
    this.hint.textContent = asking
      ? `The agent asks a question (${this.state}): your answer continues task ${this.taskId}.`
      : done
        ? `Task ${this.taskId} is ${this.state}: the next message starts a new task in the same context.`
        : '';
    this.sendButton.textContent = asking ? 'Answer' : 'Send';
    this.input.placeholder = asking ? 'Answer the agent…  (Ctrl+Enter sends)' : 'Write a message, paste a diff, or drop files here…  (Ctrl+Enter sends)';
  }

  private bubble(role: 'user' | 'agent', parts: any[], question = false): HTMLElement {
    this.thread.querySelector('.empty')?.remove();
    const el = h(
      'div',
      { class: `bubble ${role}${question ? ' question' : ''}`, 'data-testid': question ? 'question' : `${role}-message` },
      question ? h('div', { class: 'asks' }, 'The agent asks:') : null,
      renderParts(parts),
    );
    this.thread.append(el);
    el.scrollIntoView({ block: 'end' });
    return el;
  }

  private status(status: any, live: boolean): void {
    const state = stateName(status?.state);
    this.state = state;
    if (live) this.thread.append(h('div', { class: 'transition', 'data-testid': 'transition' }, '→ ', stateChip(status?.state)));
    const parts = status?.message?.parts ?? [];
    if (parts.length) this.bubble('agent', parts, INTERRUPTED.includes(state));
  }

  private artifact(update: any): void {
    const art = update.artifact;
    let entry = this.artifacts.get(art.artifactId);
    if (!entry) {
      entry = { el: h('div', { class: 'artifact', 'data-testid': 'artifact' }), parts: [] };
      this.artifacts.set(art.artifactId, entry);
      this.thread.querySelector('.empty')?.remove();
      this.thread.append(entry.el);
    }
    entry.parts = update.append ? [...entry.parts, ...(art.parts ?? [])] : [...(art.parts ?? [])];
    replace(
      entry.el,
      h('div', { class: 'artifact-head' }, 'artifact ', h('strong', null, art.name || art.artifactId), art.description ? ` — ${art.description}` : ''),
      renderParts(entry.parts),
    );
  }

  private handle(event: any): void {
    if (event.task) {
      const task = event.task;
      const first = task.id !== this.taskId;
      this.taskId = task.id;
      this.contextId = task.contextId;
      if (first) this.onTaskChanged(task.id);
      this.status(task.status, true);
      for (const art of task.artifacts ?? []) this.artifact({ artifact: art, append: false });
    } else if (event.statusUpdate) {
      this.status(event.statusUpdate.status, true);
    } else if (event.artifactUpdate) {
      this.artifact(event.artifactUpdate);
    } else if (event.message) {
      this.bubble('agent', event.message.parts ?? []);
    }
    this.update();
  }

  private parts(): any[] {
    const parts = this.attachments.map((a) => a.part);
    const text = this.input.value;
    if (text.trim()) parts.unshift({ text });
    return parts;
  }

  async send(): Promise<void> {
    const parts = this.parts();
    if (!parts.length || this.abort) return;
    const message: any = { role: 'ROLE_USER', parts, messageId: crypto.randomUUID() };
    if (this.contextId) message.contextId = this.contextId;
    if (this.taskId && !TERMINAL.includes(this.state)) message.taskId = this.taskId;
    if (!message.taskId) this.artifacts.clear();
    this.bubble('user', parts);
    this.input.value = '';
    this.attachments = [];
    this.renderChips();
    await this.follow('api/send', { method: 'POST', body: JSON.stringify({ message }) });
  }

  private async follow(path: string, init: RequestInit): Promise<void> {
    this.abort = new AbortController();
    this.sendButton.disabled = true;
    this.stopButton.hidden = false;
    await stream(
      path,
      init,
      {
        event: (e) => this.handle(e),
        error: (err: ApiError) => this.thread.append(h('div', { class: 'error', 'data-testid': 'error' }, `${err.reason}: ${err.message}`)),
        end: () => {},
      },
      this.abort.signal,
    );
    this.abort = null;
    this.sendButton.disabled = false;
    this.stopButton.hidden = true;
    this.update();
  }
}
