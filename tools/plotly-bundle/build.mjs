// Bundles entry.js into one minified classic script that sets `window.Plotly`, the way plotly.js's
// own dist files are built (its esbuild-config.js: iife, global `Plotly`, es2016, `global` = window).
// Run by `make vendor` in a scratch copy of this folder after `npm ci`:
//   node build.mjs <outfile>
// Output depends only on the locked packages and these options (esbuild is deterministic), so
// the Makefile can check the file's sha256 against static/vendor/VERSIONS.md.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
const outfile = process.argv[2];
if (!outfile) {
  console.error('usage: node build.mjs <outfile>');
  process.exit(2);
}

// The banner states what is inside and keeps plotly.js's copyright notice (MIT asks for it).
const plotlyVersion = require('plotly.js/package.json').version;
const copyright = readFileSync(require.resolve('plotly.js/LICENSE'), 'utf8')
  .split('\n').find((line) => line.startsWith('Copyright'));
const banner = [
  '/**',
  `* plotly.js (fabricscope: core + bar + box - minified) v${plotlyVersion}`,
  `* ${copyright}`,
  '* Licensed under the MIT license',
  `* Built by tools/plotly-bundle (esbuild ${require('esbuild/package.json').version})`,
  '*/',
].join('\n');

await build({
  entryPoints: ['entry.js'],
  outfile,
  bundle: true,
  minify: true,
  format: 'iife',
  globalName: 'Plotly',
  target: 'es2016',
  define: { global: 'window', 'define.amd': 'false' },
  // src/registry.js imports maplibre-gl's CSS only when a map trace registers; none does here.
  loader: { '.css': 'empty' },
  // Keep the dependencies' licence comments (d3, culori, ...), gathered at the end of the file.
  legalComments: 'eof',
  banner: { js: banner },
  logLevel: 'warning',
});
