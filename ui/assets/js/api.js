// The console's only way to the data: the public /v1 API with the token the user gave, like memctl.

const TOKEN = 'memcluster.token';

export const token = {
  get: () => sessionStorage.getItem(TOKEN) || '',
  set: (t) => (t ? sessionStorage.setItem(TOKEN, t) : sessionStorage.removeItem(TOKEN)),
};

export class APIError extends Error {
  constructor(status, body) {
    super(body?.error?.message || `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code || '';
  }
}

export async function api(path, { method = 'GET', body, query } = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query || {})) if (v !== undefined && v !== '') url.searchParams.set(k, v);
  const headers = {};
  if (token.get()) headers.Authorization = 'Bearer ' + token.get();
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new APIError(res.status, data);
  return data;
}

export const enc = encodeURIComponent;

// listMemories is the one place that lists a user's memories: GET /v1/users/{user}/memories, paged on the
// server in creation order (ids are ULIDs), filtered by type and by occurred-at before a time; next is the
// server's opaque cursor of the following page ('' on the last).
export async function listMemories(user, { type, before, cursor, limit = 20 }) {
  const res = await api(`/v1/users/${enc(user)}/memories`, { query: { type, to: before, cursor, limit } });
  return { memories: res.memories, next: res.next_cursor || '' };
}
