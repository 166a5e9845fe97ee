// ESLint flat config (ESLint 9). `npx eslint static/js tests/js` — run by tests/test_javascript.py.
//
// static/js is browser code served as it is (no build step): ES modules, browser globals only.
// Vendored libraries stay classic scripts and are read as globals, which each module declares
// itself (`/* global cytoscape */`), so an undeclared global is still an error here.
// tests/js holds node:test unit tests of the DOM-free modules.
//
// Browser code stays small enough to read: no function over complexity 15 or 60 lines (a long
// handler becomes a lookup table or small helpers, not a disabled rule).
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['static/vendor/**', 'node_modules/**', 'staticfiles/**', '.venv/**', 'artifacts/**'] },
  js.configs.recommended,
  {
    files: ['static/js/**/*.js'],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...globals.browser },
    },
    rules: {
      complexity: ['error', 15],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ['tests/js/**/*.{js,mjs}', 'eslint.config.js'],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...globals.node },
    },
  },
];
