// The console's own same-origin API (a2a_grpc/console/_app.py). Every call
// carries X-A2A-Console: 1; a console mounted behind `serve --auth` also needs
// the caller's credential, which this tab keeps in memory only.

export class ApiError extends Error {
  constructor(
    public reason: string,
    message: string,
    public status = 0,
  ) {
    super(message);
  }
}

let credential: [string, string] | null = null;
let onUnauthenticated: (() => void) | null = null;

export function setCredential(header: string, value: string): void {
  credential = value ? [header, value] : null;
}

export function whenUnauthenticated(handler: () => void): void {
  onUnauthenticated = handler;
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = { 'X-A2A-Console': '1', ...extra };
  if (credential) out[credential[0]] = credential[1];
  return out;
}

async function failure(resp: Response): Promise<ApiError> {
  let reason = `HTTP_${resp.status}`;
  let message = resp.statusText;
  try {
    const body = await resp.json();
    if (body?.error) ({ reason, message } = body.error);
  } catch {
    /* not JSON */
  }
  if (reason === 'UNAUTHENTICATED') onUnauthenticated?.();
  return new ApiError(reason, message, resp.status);
}

export async function get<T = any>(path: string): Promise<T> {
  const resp = await fetch(path, { headers: headers() });
  if (!resp.ok) throw await failure(resp);
  return resp.json();
}

export async function post<T = any>(path: string, body?: unknown): Promise<T> {
  const resp = await fetch(path, {
    method: 'POST',
    headers: headers({ 'Content-Type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!resp.ok) throw await failure(resp);
  return resp.json();
}

export interface StreamHandlers {
  event(event: any): void;
  error(err: ApiError): void;
  end(): void;
}

/** Reads the console's event stream (one JSON object per `data:` line). */
export async function stream(path: string, init: RequestInit, on: StreamHandlers, signal?: AbortSignal): Promise<void> {
  let resp: Response;
  try {
    resp = await fetch(path, { ...init, signal, headers: headers(init.body ? { 'Content-Type': 'application/json' } : {}) });
  } catch (err) {
    if (!signal?.aborted) on.error(new ApiError('UNAVAILABLE', String(err)));
    return;
  }
  if (!resp.ok || !resp.body) {
    on.error(await failure(resp));
    return;
  }
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let ended = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        if (!data) continue;
        const item = JSON.parse(data);
        if (item.event) on.event(item.event);
        else if (item.error) {
          ended = true;
          on.error(new ApiError(item.error.reason, item.error.message));
        } else if (item.end) {
          ended = true;
          on.end();
        }
      }
    }
  } catch (err) {
    if (!signal?.aborted) on.error(new ApiError('UNAVAILABLE', `the stream broke: ${err}`));
    return;
  }
  if (!ended && !signal?.aborted) on.end();
}
