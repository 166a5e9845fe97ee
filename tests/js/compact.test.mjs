// Unit tests of the editor's compact document (static/js/editor/compact.js): the form of
// designer/editor_compact.py rebuilt into the document, elements in place and each its own object.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { COMPACT_FORMAT, expandDocument, parseEditorDocument } from '../../static/js/editor/compact.js';

const compact = () => ({
  format: COMPACT_FORMAT,
  document: {
    format: 'fabricscope.topology/1', name: 'two hosts',
    groups: [{ id: 'h0', kind: 'host' }, { id: 'h1', kind: 'host' }],
    nodes: [0, { id: 'leaf0', kind: 'switch' }, 1],
    links: [0, { id: 'h0/nic0-leaf0', a: 'h0/nic0', b: 'leaf0', tech: 'eth400' }, 1],
  },
  host_templates: [{
    nodes: [{ id: 'gpu0', kind: 'gpu', group: null, attrs: { index: 0 } }, { id: 'nic0', kind: 'nic', group: null }],
    links: [{ id: 'gpu0-nic0', a: 'gpu0', b: 'nic0', tech: 'pcie5x16' }],
  }],
  hosts: [['h0', 0], ['h1', 0]],
});

describe('expandDocument', () => {
  it('puts each host interior back in its place, ids and group under the host', () => {
    const doc = expandDocument(compact());
    assert.deepEqual(doc.nodes.map((n) => n.id), ['h0/gpu0', 'h0/nic0', 'leaf0', 'h1/gpu0', 'h1/nic0']);
    assert.deepEqual(doc.nodes.map((n) => n.group), ['h0', 'h0', undefined, 'h1', 'h1']);
    assert.deepEqual(doc.links.map((l) => [l.id, l.a, l.b]), [
      ['h0/gpu0-nic0', 'h0/gpu0', 'h0/nic0'], ['h0/nic0-leaf0', 'h0/nic0', 'leaf0'], ['h1/gpu0-nic0', 'h1/gpu0', 'h1/nic0']]);
    // the document's keys in their order, the node's too (group kept in its place)
    assert.deepEqual(Object.keys(doc), ['format', 'name', 'groups', 'nodes', 'links']);
    assert.deepEqual(Object.keys(doc.nodes[0]), ['id', 'kind', 'group', 'attrs']);
  });

  it('gives every host its own objects: an edit of one reaches no other', () => {
    const doc = expandDocument(compact());
    doc.nodes[0].attrs.index = 7;
    assert.equal(doc.nodes[3].attrs.index, 0);
  });

  it('gives a shaped element its shape with its own id and ends, each its own object', () => {
    const raw = compact();
    raw.link_shapes = [{ id: null, a: null, b: null, tech: 'eth400', attrs: { lanes: 8 } }];
    raw.document.links.push([0, 'h1/nic0-leaf0', 'h1/nic0', 'leaf0']);
    const doc = expandDocument(raw);
    const last = doc.links[doc.links.length - 1];
    assert.deepEqual(last, { id: 'h1/nic0-leaf0', a: 'h1/nic0', b: 'leaf0', tech: 'eth400', attrs: { lanes: 8 } });
    last.attrs.lanes = 4;
    assert.equal(raw.link_shapes[0].attrs.lanes, 8);
  });

  it('keeps an attribute named "__proto__" as an attribute, as JSON.parse does', () => {
    const raw = JSON.parse(JSON.stringify(compact()).replace('"attrs":{"index":0}', '"attrs":{"__proto__":{"x":1},"index":0}'));
    const doc = expandDocument(raw);
    assert.deepEqual(Object.keys(doc.nodes[3].attrs), ['__proto__', 'index']);
    assert.deepEqual(doc.nodes[3].attrs.__proto__, { x: 1 });
    assert.equal(Object.getPrototypeOf(doc.nodes[3].attrs), Object.prototype);
  });

  it('keeps a device key named "__proto__" as its own key, in its place', () => {
    const raw = JSON.parse(JSON.stringify(compact()).replace('"kind":"nic","group":null', '"kind":"nic","__proto__":5,"group":null'));
    const doc = expandDocument(raw);
    assert.deepEqual(Object.keys(doc.nodes[4]), ['id', 'kind', '__proto__', 'group']);
    assert.equal(Object.getPrototypeOf(doc.nodes[4]), Object.prototype);
  });

  it('places a template link whose end is no device of the template under the host as well', () => {
    const raw = compact();
    raw.host_templates[0].links.push({ id: 'gpu0-x', a: 'gpu0', b: 'x', tech: 'pcie5x16' });
    const doc = expandDocument(raw);
    assert.deepEqual(doc.links.filter((l) => l.b.endsWith('/x')).map((l) => [l.id, l.a, l.b]),
      [['h0/gpu0-x', 'h0/gpu0', 'h0/x'], ['h1/gpu0-x', 'h1/gpu0', 'h1/x']]);
  });

  it('leaves a plain document as it is', () => {
    const plain = { format: 'fabricscope.topology/1', nodes: [], links: [] };
    assert.equal(expandDocument(plain), plain);
    assert.deepEqual(parseEditorDocument(JSON.stringify(plain)), plain);
    assert.equal(parseEditorDocument('null'), null);
  });
});
