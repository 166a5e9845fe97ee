/* The diagnosis result page (an ES module): selecting an explanation (its button, or a click on
 * its row) shows that explanation's curve on the figure and hides the others. Every curve is
 * already in the figure designer/figures/diagnose.py built (fabricscope.explained: the trace index
 * of each rank); this only switches trace visibility, in place (Plotly.restyle) and in the stored
 * figure, so a redraw (a theme change) keeps the choice. Keyboard: the buttons are native.
 */
/* global Plotly */

const TABLE = document.getElementById('diagnosis-explanations');

function plot() { return document.querySelector('[data-plot="diagnosis"]'); }

/** Show the curve of explanation `pick` (0-based rank order), hide the others. */
function select(pick) {
  const el = plot(), fig = el && el._fsFigure;
  const traces = ((fig && fig.fabricscope) || {}).explained || [];
  if (!traces.length || pick < 0 || pick >= traces.length) return;
  const visible = traces.map((_, k) => k === pick);
  traces.forEach((t, k) => { fig.data[t].visible = visible[k]; });
  if (el.classList.contains('js-plotly-plot')) Plotly.restyle(el, { visible }, traces);
  TABLE.querySelectorAll('tr[data-rank]').forEach((row) => {
    const on = Number(row.dataset.rank) === pick;
    row.classList.toggle('fs-picked', on);
    const btn = row.querySelector('[data-explain]');
    if (btn) btn.setAttribute('aria-pressed', on ? 'true' : 'false');
  });
}

if (TABLE) {
  TABLE.addEventListener('click', (ev) => {
    const row = ev.target.closest('tr[data-rank]');
    if (row) select(Number(row.dataset.rank));
  });
  // A handle for tests and the console (as window.fabricscopeResults).
  window.fabricscopeDiagnosis = { select };
}
