// A small hyperscript: h('div', {class: 'x', onclick: fn}, 'text', child).
type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, unknown>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value as EventListener);
    } else if (key === 'class') {
      el.className = String(value);
    } else if (key === 'value' && 'value' in el) {
      (el as HTMLInputElement).value = String(value);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

const SVG = 'http://www.w3.org/2000/svg';

export function s(tag: string, attrs: Record<string, string | number> = {}, ...children: (Node | string)[]): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  for (const child of children) el.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  return el;
}

/** "2026-12-01T10:02:44.171Z" → "2026-12-01 10:02:44.171" (UTC), "" stays "". */
export function when(iso: string | undefined): string {
  if (!iso) return '';
  return iso.replace('T', ' ').replace('Z', '');
}

/** TASK_STATE_INPUT_REQUIRED → input-required */
export function stateName(state: string | undefined): string {
  return (state ?? 'TASK_STATE_UNSPECIFIED').replace('TASK_STATE_', '').toLowerCase().replace('_', '-');
}

export function stateChip(state: string | undefined): HTMLElement {
  const name = stateName(state);
  return h('span', { class: `state state-${name}`, 'data-state': name }, name);
}

export const TERMINAL = ['completed', 'failed', 'canceled', 'rejected'];
export const INTERRUPTED = ['input-required', 'auth-required'];
