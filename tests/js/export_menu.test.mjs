/* The topology page's Export menu: the file name of an answer and the readable text of an error
 * answer (static/js/export_menu.js). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { errorParts, filenameOf } from '../../static/js/export_menu.js';

describe('export menu', () => {
  it('saves under the name the server gives, else a fallback', () => {
    assert.equal(filenameOf('attachment; filename="pod-2-r1.dot"', 'x.dot-air'), 'pod-2-r1.dot');
    assert.equal(filenameOf(null, 'topology.htsim'), 'topology.htsim');
    assert.equal(filenameOf('attachment', 'f'), 'f');
  });

  it('turns an API error into a title, its message and at most five located problems', () => {
    const details = Array.from({ length: 7 }, (_, k) => ({ path: `document.nodes[${k}].kind`, message: 'no' }));
    const parts = errorParts(400, { error: { code: 'invalid_topology', message: 'not expressible', details } }, 'SimAI topology');
    assert.equal(parts.title, 'SimAI topology cannot be exported');
    assert.equal(parts.message, 'not expressible');
    assert.deepEqual(parts.details.slice(0, 2), ['document.nodes[0].kind: no', 'document.nodes[1].kind: no']);
    assert.equal(parts.details.length, 6);
    assert.equal(parts.details[5], '… and 2 more');
  });

  it('reads a 413 whose details are one object, and an answer without a body', () => {
    const big = errorParts(413, { error: { message: 'too large', details: { path: 'format', elements: 9 } } }, 'GraphML');
    assert.equal(big.message, 'too large');
    assert.deepEqual(big.details, []);
    assert.equal(errorParts(502, null, 'htsim').message, 'The server answered HTTP 502.');
  });
});
