// Parts (text, files, data) as the page shows them; a data part shaped like
// findings — a list of flat objects, alone or under one key — is a table.
import { h } from './dom';

type Row = Record<string, unknown>;

function isFlat(value: unknown): value is Row {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => v === null || typeof v !== 'object')
  );
}

/** The rows of a findings-like value, with the key they were under ('' at the top), or null. */
export function tableRows(value: unknown): { key: string; rows: Row[] } | null {
  if (Array.isArray(value) && value.length > 0 && value.every(isFlat)) return { key: '', rows: value };
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const lists = Object.entries(value).filter(([, v]) => Array.isArray(v) && v.length > 0 && v.every(isFlat));
    if (lists.length === 1) return { key: lists[0][0], rows: lists[0][1] as Row[] };
  }
  return null;
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' && Number.isInteger(value)) return String(value);
  return String(value);
}

// Columns a findings table reads best in; other keys follow in their order.
const FIRST = ['file', 'path', 'line', 'column', 'rule', 'code', 'severity', 'issue', 'message', 'recommendation'];

function caption(count: number, key: string): string {
  const noun = key || 'row';
  const singular = noun.endsWith('s') ? noun.slice(0, -1) : noun;
  return `${count} ${count === 1 ? singular : singular + 's'}`;
}

export function rowsTable(rows: Row[], title = ''): HTMLElement {
  const seen: string[] = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!seen.includes(key)) seen.push(key);
  const columns = [...FIRST.filter((c) => seen.includes(c)), ...seen.filter((c) => !FIRST.includes(c))];
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'findings', 'data-testid': 'findings-table' },
      title ? h('caption', null, title) : null,
      h('thead', null, h('tr', null, columns.map((c) => h('th', null, c)))),
      h(
        'tbody',
        null,
        rows.map((row) =>
          h(
            'tr',
            null,
            columns.map((c) => {
              const text = cell(row[c]);
              const content = /^https?:\/\//.test(text) ? h('a', { href: text, rel: 'noreferrer', target: '_blank' }, text) : text;
              return h('td', c === 'severity' ? { class: `sev sev-${text.toLowerCase()}` } : null, content);
            }),
          ),
        ),
      ),
    ),
  );
}

function decode(raw: string): string {
  try {
    const bytes = Uint8Array.from(atob(raw), (c) => c.charCodeAt(0));
    return new TextDecoder().decode(bytes);
  } catch {
    return '';
  }
}

function filePart(part: any): HTMLElement {
  const type = part.mediaType || 'application/octet-stream';
  const name = part.filename || (part.url ? part.url : 'file');
  const size = part.raw ? Math.floor((part.raw.length * 3) / 4) : 0;
  const label = `${name} · ${type}${size ? ` · ${size} bytes` : ''}`;
  const textual = part.raw && (type.startsWith('text/') || type.includes('json') || type.includes('diff'));
  if (!textual) return h('div', { class: 'file' }, part.url ? h('a', { href: part.url, rel: 'noreferrer' }, label) : label);
  return h('details', { class: 'file' }, h('summary', null, label), h('pre', { class: 'code' }, decode(part.raw)));
}

/** One part. Data parts that are tables are drawn by renderParts, merged. */
export function renderPart(part: any): HTMLElement {
  if (part.text !== undefined) return h('div', { class: 'text' }, part.text);
  if (part.raw !== undefined || part.url !== undefined) return filePart(part);
  if (part.data !== undefined) {
    const table = tableRows(part.data);
    if (table) return rowsTable(table.rows, caption(table.rows.length, table.key));
    return h('pre', { class: 'json' }, JSON.stringify(part.data, null, 2));
  }
  return h('pre', { class: 'json' }, JSON.stringify(part, null, 2));
}

/** The parts of one message or artifact; the rows of table-shaped data parts
 * under the same key become one table (an artifact sent in chunks). Beside a
 * table, text parts (the same findings for readers without one) fold away. */
export function renderParts(parts: any[]): HTMLElement[] {
  const out: HTMLElement[] = [];
  const merged = new Map<string, { rows: Row[]; rest: Row[] }>();
  const tabled = parts.some((p) => p.data !== undefined && tableRows(p.data));
  for (const part of parts) {
    const table = part.data !== undefined ? tableRows(part.data) : null;
    if (!table) {
      out.push(
        tabled && part.text !== undefined
          ? h('details', { class: 'as-text' }, h('summary', null, 'as text'), renderPart(part))
          : renderPart(part),
      );
      continue;
    }
    const group = merged.get(table.key) ?? { rows: [], rest: [] };
    if (!merged.has(table.key)) {
      merged.set(table.key, group);
      out.push(h('div', { class: 'merged', 'data-key': table.key }));
    }
    group.rows.push(...table.rows);
    if (table.key) {
      const rest = Object.fromEntries(
        Object.entries(part.data).filter(([k, v]) => k !== table.key && v !== '' && !(Array.isArray(v) && !v.length)),
      );
      if (Object.keys(rest).length) group.rest.push(rest);
    }
  }
  for (const [key, group] of merged) {
    const slot = out.find((el) => el.classList.contains('merged') && el.dataset.key === key);
    if (!slot) continue;
    slot.append(rowsTable(group.rows, caption(group.rows.length, key)));
    for (const rest of group.rest) {
      const summary = typeof rest.summary === 'string' ? rest.summary : '';
      if (summary) slot.append(h('div', { class: 'text' }, summary));
      const others = Object.fromEntries(Object.entries(rest).filter(([k]) => k !== 'summary'));
      if (Object.keys(others).length) slot.append(h('pre', { class: 'json' }, JSON.stringify(others, null, 2)));
    }
  }
  return out;
}
