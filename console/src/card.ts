// The Agent Card: identity, capabilities, interfaces, security, skills, signature; raw JSON one click away.
import { get } from './api';
import { h, replace } from './dom';

function schemeText(scheme: any): string {
  if (scheme.apiKeySecurityScheme) {
    const s = scheme.apiKeySecurityScheme;
    return `API key in ${s.location || 'header'} ${s.name || ''}`.trim();
  }
  if (scheme.httpAuthSecurityScheme) {
    const s = scheme.httpAuthSecurityScheme;
    return `HTTP ${s.scheme}${s.bearerFormat ? ` (${s.bearerFormat})` : ''}`;
  }
  if (scheme.oauth2SecurityScheme) return 'OAuth 2.0';
  if (scheme.openIdConnectSecurityScheme) return `OpenID Connect ${scheme.openIdConnectSecurityScheme.openIdConnectUrl ?? ''}`;
  if (scheme.mtlsSecurityScheme) return 'mutual TLS';
  return JSON.stringify(scheme);
}

function flags(card: any): HTMLElement {
  const caps = card.capabilities ?? {};
  const flag = (on: boolean, name: string) => h('span', { class: on ? 'flag on' : 'flag' }, `${on ? '✓' : '✗'} ${name}`);
  return h(
    'div',
    { class: 'flags' },
    flag(!!caps.streaming, 'streaming'),
    flag(!!caps.pushNotifications, 'push notifications'),
    flag(!!caps.extendedAgentCard, 'extended card'),
    (caps.extensions ?? []).map((e: any) => h('span', { class: 'flag on' }, `extension ${e.uri}`)),
  );
}

function signature(sig: { state: string; detail: string }): HTMLElement {
  const label: Record<string, string> = {
    verified: 'signature verified',
    unverified: 'signed, not verified',
    invalid: 'signature INVALID',
    unsigned: 'unsigned',
  };
  return h('span', { class: `sig sig-${sig.state}`, 'data-testid': 'signature', title: sig.detail }, label[sig.state] ?? sig.state);
}

function skills(card: any): HTMLElement {
  return h(
    'div',
    { class: 'skills' },
    (card.skills ?? []).map((skill: any) =>
      h(
        'div',
        { class: 'skill', 'data-testid': 'skill' },
        h('h4', null, skill.name || skill.id),
        h('p', null, skill.description ?? ''),
        skill.tags?.length ? h('div', { class: 'tags' }, skill.tags.map((t: string) => h('span', { class: 'tag' }, t))) : null,
        skill.examples?.length ? h('ul', { class: 'examples' }, skill.examples.map((e: string) => h('li', null, e))) : null,
        skill.inputModes?.length ? h('div', { class: 'modes' }, `in: ${skill.inputModes.join(', ')}`) : null,
        skill.outputModes?.length ? h('div', { class: 'modes' }, `out: ${skill.outputModes.join(', ')}`) : null,
      ),
    ),
  );
}

function security(card: any): HTMLElement | null {
  const schemes = Object.entries(card.securitySchemes ?? {});
  if (!schemes.length) return h('p', { class: 'muted' }, 'No security schemes: every caller is anonymous.');
  return h(
    'div',
    null,
    h('ul', null, schemes.map(([name, scheme]) => h('li', null, h('code', null, name), ' — ', schemeText(scheme)))),
    (card.securityRequirements ?? []).length
      ? h(
          'p',
          { class: 'muted' },
          'Requirements (any one): ',
          card.securityRequirements.map((r: any) => Object.keys(r.schemes ?? {}).join(' + ')).join(' · '),
        )
      : null,
  );
}

export function renderCard(data: any): HTMLElement {
  const card = data.card;
  const raw = h('pre', { class: 'json raw', 'data-testid': 'raw-json', hidden: true }, JSON.stringify(data.raw, null, 2));
  const toggle = h(
    'button',
    {
      class: 'link',
      'data-testid': 'raw-toggle',
      onclick: () => {
        raw.hidden = !raw.hidden;
        toggle.textContent = raw.hidden ? 'Show raw JSON' : 'Hide raw JSON';
      },
    },
    'Show raw JSON',
  );
  return h(
    'section',
    { class: 'card-view', 'data-testid': 'card-view' },
    h(
      'header',
      { class: 'card-head' },
      h('h2', { 'data-testid': 'agent-name' }, card.name),
      h('span', { class: 'version' }, `v${card.version ?? '?'}`),
      signature(data.signature),
      toggle,
    ),
    h('p', { class: 'description' }, card.description ?? ''),
    card.provider ? h('p', { class: 'muted' }, `by ${card.provider.organization} ${card.provider.url ?? ''}`) : null,
    flags(card),
    h('h3', null, 'Interfaces'),
    h(
      'table',
      { class: 'plain', 'data-testid': 'interfaces' },
      h('thead', null, h('tr', null, h('th', null, 'binding'), h('th', null, 'URL'), h('th', null, 'A2A'), h('th', null, 'tenant'))),
      h(
        'tbody',
        null,
        (card.supportedInterfaces ?? []).map((i: any) =>
          h('tr', null, h('td', null, i.protocolBinding), h('td', null, h('code', null, i.url)), h('td', null, i.protocolVersion ?? ''), h('td', null, i.tenant ?? '')),
        ),
      ),
    ),
    h('h3', null, 'Security'),
    security(card),
    h('h3', null, 'Modes'),
    h('p', { class: 'muted' }, `input: ${(card.defaultInputModes ?? []).join(', ')} · output: ${(card.defaultOutputModes ?? []).join(', ')}`),
    h('h3', null, `Skills (${(card.skills ?? []).length})`),
    skills(card),
    raw,
  );
}

export async function showCard(root: HTMLElement): Promise<any> {
  replace(root, h('p', { class: 'muted' }, 'Reading the Agent Card…'));
  const data = await get('api/card');
  replace(root, renderCard(data));
  return data;
}
