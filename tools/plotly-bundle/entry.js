// Entry of static/vendor/plotly-fabricscope.min.js (`make vendor` bundles it with esbuild).
// Only the trace types designer/figures draws: plotly.js's core (which registers scatter and the
// layout components) plus bar and box. A type missing here is drawn by plotly.js as a scatter,
// so tests/designer/test_vendor.py checks every type the figures use is registered.
'use strict';

var Plotly = require('plotly.js/lib/core');

Plotly.register([
    require('plotly.js/lib/bar'),
    require('plotly.js/lib/box'),
]);

module.exports = Plotly;
