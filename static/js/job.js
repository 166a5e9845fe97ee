/* Job page: poll the job's status every second, update the progress bar, and when the job is
 * done show the result link (and go there) without a manual reload.
 *
 * An ES module: the pure helpers are exported for the unit tests (tests/js/pages.test.mjs). */

const POLL_MS = 1000;
const FIRST_POLL_MS = 500;
const REDIRECT_MS = 1200;   // time to see "Succeeded" before the result page opens
const MAX_BACKOFF_MS = 10000;
const STATE_LABELS = { queued: 'Queued', running: 'Running', succeeded: 'Succeeded', failed: 'Failed', cancelled: 'Cancelled' };
const BAR_CLASS = { succeeded: ' done', failed: ' failed', cancelled: ' cancelled' };

/** A status time (ISO 8601) as "Mar 4, 14:05:09" in UTC, "—" when there is none. */
export function formatTime(iso) {
  if (!iso) return '—';
  return new Date(iso).toLocaleString('en-US', { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false, timeZone: 'UTC' });
}

/** The progress bar's class for a job state. */
export function progressClass(state) { return 'progress' + (Object.hasOwn(BAR_CLASS, state) ? BAR_CLASS[state] : ''); }

/** The state badge's text: the server's label, else ours, else the state itself. */
export function stateLabel(s) { return s.state_label || (Object.hasOwn(STATE_LABELS, s.state) ? STATE_LABELS[s.state] : '') || s.state; }

/** Delay before the next poll after `failures` failed ones in a row: a restarting server is
 * given more and more time, 10 s at most. */
export function retryDelayMs(failures) { return Math.min(MAX_BACKOFF_MS, POLL_MS * 2 ** failures); }

const byId = (id) => document.getElementById(id);

function renderCancel(s) {
  const cancel = byId('cancel-form');
  if (s.terminal) { cancel.hidden = true; return; }
  if (!s.cancel_requested) return;
  const b = cancel.querySelector('button');
  b.disabled = true; b.textContent = 'Cancelling…';
}

function renderOutcome(s) {
  if (s.error) {
    byId('job-error').textContent = s.error;
    byId('job-error-wrap').hidden = false;
  }
  if (s.result_url) {
    byId('result-link').href = s.result_url;
    byId('job-result').hidden = false;
  }
}

function render(root, bar, s) {
  root.setAttribute('data-state', s.state);
  bar.querySelector('span').style.width = s.progress + '%';
  bar.setAttribute('aria-valuenow', s.progress);
  bar.className = progressClass(s.state);
  byId('job-pct').textContent = s.progress + '%';
  byId('job-message').textContent = s.message || 'waiting for a worker';
  const badge = document.querySelector('#job-state .badge');
  badge.className = 'badge state-' + s.state;
  badge.setAttribute('data-state', s.state);
  badge.textContent = stateLabel(s);
  byId('job-started').textContent = formatTime(s.started_at);
  byId('job-finished').textContent = formatTime(s.finished_at);
  byId('job-attempts').textContent = s.attempts;
  renderCancel(s);
  renderOutcome(s);
}

export function initJobPage() {
  const root = byId('job');
  if (!root) return;
  const url = root.getAttribute('data-status-url');
  const bar = byId('job-progress');
  let failures = 0;
  const poll = () => {
    fetch(url, { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
      .then((r) => { if (!r.ok) throw new Error(r.status); return r.json(); })
      .then((s) => {
        failures = 0;
        render(root, bar, s);
        if (!s.terminal) { setTimeout(poll, POLL_MS); return; }
        if (s.result_url && root.getAttribute('data-redirect') !== 'off') {
          setTimeout(() => window.location.assign(s.result_url), REDIRECT_MS);
        }
      })
      .catch(() => {
        failures += 1; // a restarting server: back off, keep trying
        byId('job-message').textContent = 'connection lost, retrying…';
        setTimeout(poll, retryDelayMs(failures));
      });
  };
  const initial = root.getAttribute('data-state');
  if (initial === 'queued' || initial === 'running') setTimeout(poll, FIRST_POLL_MS);
}

// Runs once the page is parsed (a module); under Node (unit tests) there is no page.
if (typeof document !== 'undefined') initJobPage();
