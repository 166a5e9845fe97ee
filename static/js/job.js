/* Job page: poll the job's status every second, update the progress bar, and when the job is
   done show the result link (and go there) without a manual reload. */
function initJobPage() {
  var root = document.getElementById('job');
  if (!root) return;
  var url = root.getAttribute('data-status-url');
  var bar = document.getElementById('job-progress');
  var fill = bar.querySelector('span');
  var LABELS = { queued: 'Queued', running: 'Running', succeeded: 'Succeeded', failed: 'Failed', cancelled: 'Cancelled' };
  var failures = 0;

  function fmt(iso) {
    if (!iso) return '—';
    var d = new Date(iso);
    return d.toLocaleString('en-US', { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false, timeZone: 'UTC' });
  }

  function render(s) {
    root.setAttribute('data-state', s.state);
    fill.style.width = s.progress + '%';
    bar.setAttribute('aria-valuenow', s.progress);
    bar.className = 'progress' + (s.state === 'succeeded' ? ' done' : s.state === 'failed' ? ' failed' : s.state === 'cancelled' ? ' cancelled' : '');
    document.getElementById('job-pct').textContent = s.progress + '%';
    document.getElementById('job-message').textContent = s.message || 'waiting for a worker';
    var badge = document.querySelector('#job-state .badge');
    badge.className = 'badge state-' + s.state;
    badge.setAttribute('data-state', s.state);
    badge.textContent = s.state_label || LABELS[s.state] || s.state;
    document.getElementById('job-started').textContent = fmt(s.started_at);
    document.getElementById('job-finished').textContent = fmt(s.finished_at);
    document.getElementById('job-attempts').textContent = s.attempts;
    var cancel = document.getElementById('cancel-form');
    if (s.terminal) cancel.hidden = true;
    else if (s.cancel_requested) { var b = cancel.querySelector('button'); b.disabled = true; b.textContent = 'Cancelling…'; }
    if (s.error) {
      document.getElementById('job-error').textContent = s.error;
      document.getElementById('job-error-wrap').hidden = false;
    }
    if (s.result_url) {
      document.getElementById('result-link').href = s.result_url;
      document.getElementById('job-result').hidden = false;
    }
  }

  function poll() {
    fetch(url, { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.json(); })
      .then(function (s) {
        failures = 0;
        render(s);
        if (!s.terminal) { setTimeout(poll, 1000); return; }
        if (s.result_url && root.getAttribute('data-redirect') !== 'off') {
          setTimeout(function () { window.location.assign(s.result_url); }, 1200);
        }
      })
      .catch(function () {
        failures += 1;  // a restarting server: back off, keep trying
        document.getElementById('job-message').textContent = 'connection lost, retrying…';
        setTimeout(poll, Math.min(10000, 1000 * Math.pow(2, failures)));
      });
  }

  var initial = root.getAttribute('data-state');
  if (initial === 'queued' || initial === 'running') setTimeout(poll, 500);
}

// A module: runs once the page is parsed; the function keeps the early return for pages without #job.
initJobPage();
