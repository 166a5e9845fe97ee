/* The nccl-tests page's axis switches (an ES module): size axis labelled at powers of two or of
 * ten, bus bandwidth on a linear or a log axis. The choices are plain <select>s of the page's
 * form (keyboard-usable; posted with the form, a new prediction keeps them); this module applies
 * a change in place with Plotly.relayout so a switch does not re-run the prediction. The tick
 * sets come with each figure (fabricscope.axes.size, built by designer/figures/nccl_tests.py):
 * figures are only ever built in Python.
 */
/* global Plotly */

const SIZE_PLOTS = ['nccl_busbw', 'nccl_time'];

function plot(key) { return document.querySelector(`[data-plot="${key}"]`); }

/** Apply `update` (Plotly relayout keys) to the plot and to its stored figure, so a redraw (a
 * theme change) keeps the choice. */
function apply(el, update) {
  const fig = el && el._fsFigure;
  if (!fig) return;
  Object.entries(update).forEach(([path, value]) => {
    const [axis, attr] = path.split('.');
    fig.layout[axis] = { ...(fig.layout[axis] || {}), [attr]: value };
  });
  if (el.classList.contains('js-plotly-plot')) Plotly.relayout(el, update);
}

function sizeAxis(base) {
  SIZE_PLOTS.forEach((key) => {
    const el = plot(key), fig = el && el._fsFigure;
    const ticks = fig && ((fig.fabricscope || {}).axes || {}).size;
    if (!ticks || !ticks[base]) return;
    apply(el, { 'xaxis.tickvals': ticks[base].tickvals, 'xaxis.ticktext': ticks[base].ticktext });
  });
}

function busbwAxis(scale) {
  const update = { 'yaxis.type': scale === 'log' ? 'log' : 'linear', 'yaxis.autorange': true };
  update['yaxis.rangemode'] = scale === 'log' ? 'normal' : 'tozero';
  // One label a decade on a log axis (as designer/figures/nccl_tests.py draws it); auto on linear.
  update['yaxis.dtick'] = scale === 'log' ? 1 : null;
  apply(plot('nccl_busbw'), update);
}

function bind(id, handler) {
  const select = document.getElementById(id);
  if (select) select.addEventListener('change', () => handler(select.value));
}

bind('id_size_axis', sizeAxis);
bind('id_busbw_axis', busbwAxis);
