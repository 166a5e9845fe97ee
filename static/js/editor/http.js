/* Fabricscope editor — JSON requests to the API and their error messages. */

/** fetch() JSON with the CSRF header (and `prefer`, an RFC 7240 Prefer header: a save asks
 * `return=minimal`, not to be sent back the document it just sent); never throws: {status,
 * ok, body} (status 0 on a network error). */
export async function requestJSON(url, { method = 'GET', body, csrf, prefer } = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (csrf) headers['X-CSRFToken'] = csrf;
  if (prefer) headers.Prefer = prefer;
  let resp;
  try {
    resp = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch (err) {
    return { status: 0, ok: false, body: { error: { code: 'network', message: `Network error: ${err.message}` } } };
  }
  let data = null;
  const text = await resp.text();
  try { data = text ? JSON.parse(text) : null; } catch { data = { error: { code: 'bad_response', message: text.slice(0, 300) } }; }
  return { status: resp.status, ok: resp.ok, body: data };
}

/** The human message of an API error response. */
export function errorMessage(res) {
  const e = res.body && res.body.error;
  if (e && e.message) return e.message;
  if (res.body && res.body.detail) return res.body.detail;
  return `HTTP ${res.status}`;
}
