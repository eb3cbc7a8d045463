// The console's shell: a header with the agent, tabs, and the views behind them (hash routes).
import './style.css';
import { ApiError, get, setCredential, whenUnauthenticated } from './api';
import { showCard } from './card';
import { Charts } from './charts';
import { ChatView } from './chat';
import { h, replace } from './dom';
import { DeadLetterPanel, RegistryPanel } from './ops';
import { TaskDetail, TaskList } from './tasks';

const app = document.getElementById('app')!;
const main = h('main', { 'data-testid': 'main' });
const title = h('span', { class: 'agent', 'data-testid': 'header-agent' }, 'a2a-grpc console');
const target = h('span', { class: 'target muted' });
const tabs = ['card', 'chat', 'tasks', 'ops', 'charts'] as const;
type Tab = (typeof tabs)[number];
const labels: Record<Tab, string> = { card: 'Agent Card', chat: 'Conversation', tasks: 'Tasks', ops: 'Operations', charts: 'Charts' };
const nav = h(
  'nav',
  null,
  tabs.map((t) => h('a', { href: `#${t}`, 'data-tab': t, 'data-testid': `tab-${t}` }, labels[t])),
);

const chat = new ChatView(() => {});
const detail = new TaskDetail((taskId) => {
  location.hash = '#chat';
  void chat.load(taskId);
});
const list = new TaskList((taskId) => (location.hash = `#task/${taskId}`));
const deadLetters = new DeadLetterPanel();
const registry = new RegistryPanel();
const charts = new Charts();
const cardRoot = h('div');
let info: any = { panels: {} };

function login(): void {
  if (document.querySelector('.login')) return;
  const value = h('input', { type: 'password', placeholder: 'API key or bearer token', 'data-testid': 'credential' });
  const kind = h('select', null, h('option', { value: 'X-API-Key' }, 'API key'), h('option', { value: 'Authorization' }, 'bearer token'));
  const box = h(
    'form',
    {
      class: 'login',
      onsubmit: (e: Event) => {
        e.preventDefault();
        setCredential(kind.value, kind.value === 'Authorization' ? `Bearer ${value.value}` : value.value);
        box.remove();
        void route();
      },
    },
    h('p', null, 'This server asks who you are. Your credential stays in this tab’s memory (gone on reload).'),
    kind,
    value,
    h('button', { class: 'primary', type: 'submit' }, 'Use'),
  );
  app.prepend(box);
}

async function route(): Promise<void> {
  const [tab, arg] = location.hash.replace(/^#/, '').split('/');
  const current = (tabs as readonly string[]).includes(tab) ? (tab as Tab) : tab === 'task' ? 'tasks' : 'card';
  nav.querySelectorAll('a').forEach((a) => a.classList.toggle('active', a.dataset.tab === current));
  detail.close();
  try {
    if (tab === 'task' && arg) {
      replace(main, detail.el);
      await detail.show(decodeURIComponent(arg));
    } else if (current === 'chat') {
      replace(main, chat.el);
    } else if (current === 'tasks') {
      replace(main, list.el);
      await list.load();
    } else if (current === 'ops') {
      const panels = [];
      if (info.panels.deadLetters) panels.push(deadLetters.el);
      else panels.push(h('p', { class: 'muted' }, 'Dead letters: run the console with --store (the server’s store), or inside a2a-grpc serve.'));
      if (info.panels.registry) panels.push(registry.el);
      else panels.push(h('p', { class: 'muted' }, 'Registry: run the console with --registry URL.'));
      replace(main, h('div', { class: 'ops' }, panels));
      await Promise.all([info.panels.deadLetters && deadLetters.load(), info.panels.registry && registry.load()]);
    } else if (current === 'charts') {
      replace(main, info.panels.metrics ? charts.el : h('p', { class: 'muted' }, 'Charts are off (--no-metrics).'));
      charts.render();
    } else {
      replace(main, cardRoot);
      const data = await showCard(cardRoot);
      title.textContent = data.card.name;
      document.title = `${data.card.name} · a2a-grpc console`;
    }
  } catch (err) {
    const e = err as ApiError;
    replace(main, h('div', { class: 'error', 'data-testid': 'error' }, `${e.reason}: ${e.message}`));
  }
}

async function start(): Promise<void> {
  whenUnauthenticated(login);
  app.append(h('header', { class: 'top' }, h('span', { class: 'logo' }, 'A2A'), title, target, nav), main);
  try {
    info = await get('api/info');
    target.textContent = info.target;
    if (info.panels.metrics) charts.start();
  } catch (err) {
    replace(main, h('div', { class: 'error' }, `${(err as ApiError).reason}: ${(err as ApiError).message}`));
    return;
  }
  window.addEventListener('hashchange', () => void route());
  await route();
}

void start();
