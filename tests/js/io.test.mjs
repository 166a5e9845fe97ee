// Unit tests of the editor's input/output (static/js/editor/io.js, http.js, hosts.js,
// generate.js): what a file holds, what the server's answers mean, where problems point, the
// save's base, and the ops of inserting or merging a host or a generated cluster.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';

import { mergeOps } from '../../static/js/editor/generate.js';
import { fragmentClash, fragmentOps, importedText, matrixSummary, templateUrl } from '../../static/js/editor/hosts.js';
import { errorMessage, requestJSON } from '../../static/js/editor/http.js';
import {
  conflictText, fileStem, locateProblems, readImport, resolvePath, savedBase, savedRevision, validationProblems,
} from '../../static/js/editor/io.js';
import { Model, normalizeDocument } from '../../static/js/editor/model.js';
import { cluster, host, tiny } from './fixtures.mjs';

describe('readImport', () => {
  it('reads a topology document, or a scenario\'s topology', () => {
    assert.deepEqual(readImport('t.json', JSON.stringify(tiny())).doc, tiny());
    const scenario = { format: 'fabricscope.scenario/1', topology: tiny(), patterns: [] };
    assert.deepEqual(readImport('s.json', `  ${JSON.stringify(scenario)}`).doc, tiny());
  });

  it('sends anything that is not JSON to the server (NCCL XML, topo -m, hwloc)', () => {
    assert.deepEqual(readImport('nccl.xml', '<system version="1">'), { server: true });
    assert.deepEqual(readImport('topo.txt', '\tGPU0\tGPU1\n'), { server: true });
  });

  it('sends a SimAI topology file to the server as a whole design (format simai-topo)', () => {
    const simai = '90 8 2 72 544 A100\n16 17 18 \n0 16 2400Gbps 0.000025ms 0\n';
    assert.deepEqual(readImport('spectrum-x.txt', simai), { server: true, format: 'simai-topo' });
    assert.deepEqual(readImport('old.txt', '3 2 0 1 2\r\n2 \n0 2 100Gbps 0.001ms 0\n'), { server: true, format: 'simai-topo' });
    assert.deepEqual(readImport('topo.txt', '\tGPU0\tGPU1\nGPU0\t X \tNV18\n'), { server: true });
    assert.deepEqual(readImport('four.txt', '1 2 3 4\n'), { server: true });
  });

  it('says what is wrong with a JSON file that is no topology', () => {
    assert.match(readImport('bad.json', '{"nodes": [').error, /^bad\.json: not valid JSON \(/);
    assert.equal(readImport('x.json', '{"name": "x"}').error, 'x.json: not a fabricscope.topology/1 document (no "nodes" list)');
    assert.equal(readImport('n.json', 'null').server, true);
    assert.match(readImport('a.json', '[1]').error, /no "nodes" list/);
  });

  it('names exported files after the document', () => {
    assert.equal(fileStem({ name: 'My design / v2' }), 'My_design_v2');
    assert.equal(fileStem({}), 'topology');
  });
});

describe('answers of the revisions and validate APIs', () => {
  it('reads the saved revision number in each shape the API answers with', () => {
    assert.equal(savedRevision({ revision: 5 }), 5);
    assert.equal(savedRevision({ revision: { number: 6 } }), 6);
    assert.equal(savedRevision({ number: 7 }), 7);
    assert.equal(savedRevision(null), undefined);
  });

  it('explains a conflict', () => {
    assert.equal(conflictText(3, { error: { details: { current_revision: 5 } } }), 'You started from revision 3; the latest is revision 5.');
    assert.equal(conflictText(null, {}), 'You started from revision (none); the latest is revision ?.');
  });

  it('takes a 400 or a listed problem for problems, a clean 200 for none', () => {
    const rejected = { error: { message: 'bad', details: [] } };
    assert.equal(validationProblems({ status: 400, body: rejected }), rejected);
    assert.equal(validationProblems({ status: 200, ok: true, body: { problems: [] } }), null);
    assert.deepEqual(validationProblems({ status: 200, ok: true, body: { problems: [{ path: 'nodes[0]', message: 'x' }] } }),
      { error: { message: 'The document has problems', details: [{ path: 'nodes[0]', message: 'x' }] } });
    assert.equal(validationProblems({ status: 500, body: null }), null);
  });

  it('gives an error\'s message, detail or status', () => {
    assert.equal(errorMessage({ status: 400, body: { error: { message: 'no' } } }), 'no');
    assert.equal(errorMessage({ status: 403, body: { detail: 'forbidden' } }), 'forbidden');
    assert.equal(errorMessage({ status: 502, body: null }), 'HTTP 502');
  });
});

describe('problem paths', () => {
  const doc = normalizeDocument(tiny());

  it('maps "nodes[i]…", "links[i]…", "groups[i]" (and the revisions API\'s "document.…") to elements', () => {
    assert.deepEqual(resolvePath('nodes[1].kind', doc), { kind: 'node', id: 'h0/gpu1' });
    assert.deepEqual(resolvePath('document.links[0].b', doc), { kind: 'link', id: 'h0/gpu0-gpu1' });
    assert.deepEqual(resolvePath('groups[1]', doc), { kind: 'group', id: 'h0' });
    assert.equal(resolvePath('nodes[9].id', doc), null);
    assert.equal(resolvePath('name', doc), null);
    assert.equal(resolvePath(undefined, doc), null);
  });

  it('locates each problem of an error body', () => {
    const body = { error: { message: 'The document has problems', details: [{ path: 'nodes[2].kind', message: 'unknown' }, { path: '', message: 'x' }] } };
    const { message, problems } = locateProblems(body, doc);
    assert.equal(message, 'The document has problems');
    assert.deepEqual(problems.map((p) => p.target), [{ kind: 'node', id: 'leaf0' }, null]);
    assert.deepEqual(locateProblems(null, doc), { message: undefined, problems: [] });
  });
});

describe('savedBase', () => {
  it('is nothing before the first revision', () => {
    const ed = { server: { revision: null, savedDocument: undefined }, config: {} };
    assert.equal(savedBase(ed), null);
  });

  it('parses the stored revision again from the page, once, in getDocument()\'s form', () => {
    let reads = 0;
    const ed = { server: { revision: 2, savedDocument: undefined }, config: { readDocument: () => { reads += 1; return tiny(); } } };
    const base = savedBase(ed);
    assert.deepEqual(base, new Model(tiny()).toJSON());
    assert.equal(savedBase(ed), base);
    assert.equal(reads, 1);
  });

  it('is the last saved document after a save', () => {
    const saved = { name: 'saved' };
    assert.equal(savedBase({ server: { revision: 3, savedDocument: saved }, config: {} }), saved);
  });
});

describe('requestJSON', () => {
  const realFetch = globalThis.fetch;
  afterEach(() => { globalThis.fetch = realFetch; });

  it('posts JSON with the CSRF token and reads the answer', async () => {
    let seen;
    globalThis.fetch = async (url, init) => { seen = { url, init }; return new Response('{"ok": 1}', { status: 201 }); };
    const res = await requestJSON('/api/x/', { method: 'POST', body: { a: 1 }, csrf: 'tok' });
    assert.deepEqual(res, { status: 201, ok: true, body: { ok: 1 } });
    assert.equal(seen.init.headers['X-CSRFToken'], 'tok');
    assert.equal(seen.init.headers['Content-Type'], 'application/json');
    assert.equal(seen.init.body, '{"a":1}');
    assert.equal(seen.init.credentials, 'same-origin');
  });

  it('never throws: a network error and a non-JSON answer come back as error bodies', async () => {
    globalThis.fetch = async () => { throw new Error('offline'); };
    assert.deepEqual(await requestJSON('/x'), { status: 0, ok: false, body: { error: { code: 'network', message: 'Network error: offline' } } });
    globalThis.fetch = async () => new Response('<h1>Bad gateway</h1>', { status: 502 });
    const res = await requestJSON('/x');
    assert.deepEqual([res.status, res.ok, res.body.error.code, res.body.error.message], [502, false, 'bad_response', '<h1>Bad gateway</h1>']);
    globalThis.fetch = async () => new Response(null, { status: 204 });
    assert.equal((await requestJSON('/x')).body, null);
  });
});

describe('hosts: templates, inserted fragments, server imports', () => {
  it('fills the template URL pattern and adds the host id', () => {
    const base = 'https://fs.example/topologies/1/edit/';
    assert.equal(templateUrl('/api/v1/templates/{name}/host/', 'dgx h100', 'h3', base), 'https://fs.example/api/v1/templates/dgx%20h100/host/?host_id=h3');
    assert.equal(templateUrl('/t/__name__/', 'a', 'h0', base), 'https://fs.example/t/a/?host_id=h0');
  });

  it('finds an id the document already has', () => {
    const m = new Model(cluster(1));
    assert.equal(fragmentClash(m, normalizeDocument(host('h1'))), undefined);
    assert.equal(fragmentClash(m, normalizeDocument(host('h0'))).id, 'h0');
  });

  it('lays an inserted host out to the right of the canvas, inside the given group', () => {
    const m = new Model({ ...tiny(), layout: { positions: { 'h0/gpu0': [0, -50], 'h0/gpu1': [400, 0], leaf0: [100, 0] } } });
    const frag = normalizeDocument(host('h1'));
    const ops = fragmentOps(m, (id) => m.position(id) || [0, 0], frag, 'r0');
    m.apply(ops, 'insert');
    assert.equal(m.group('h1').parent, 'r0');
    assert.equal(m.descendantNodes('h1').length, 32);
    const xs = m.descendantNodes('h1').map((id) => m.position(id)[0]);
    assert.ok(Math.min(...xs) >= 400 + 120 - 1, `left edge ${Math.min(...xs)}`);
    assert.equal(Math.min(...m.descendantNodes('h1').map((id) => m.position(id)[1])), -50);
  });

  it('says which defaults a server import assumed', () => {
    assert.equal(importedText('a.xml', 'nccl', 'h0', []), 'Imported a.xml (nccl) as host h0');
    assert.equal(importedText('a.txt', 'nvidia-smi', 'h1', ['NIC speed', 'x']), 'Imported a.txt (nvidia-smi) as host h1 · 2 defaults assumed: NIC speed …');
  });

  it('summarizes the matrix comparison', () => {
    const mx = { rows: ['GPU0', 'GPU1'], labels: ['GPU0', 'GPU1'], engine: [], input: [] };
    assert.match(matrixSummary({ name: 'a.txt', matrix: mx }, 0), /^All 4 cells agree/);
    assert.match(matrixSummary({ name: 'a.txt', matrix: mx }, 1), /^1 of 4 cells differ/);
    assert.match(matrixSummary({ name: 'a.xml', format: 'nccl', matrix: { ...mx, input: null } }, 0), /^a\.xml \(nccl\) holds no matrix/);
  });
});

describe('generate: merge', () => {
  it('adds what is new and keeps what the document already has', () => {
    const m = new Model(cluster(1));
    const { ops, skipped } = mergeOps(m, normalizeDocument(cluster(2)));
    assert.equal(skipped, 1 + 42 + 83);                     // cluster(1)'s groups, devices and links
    m.apply(ops, 'merge');
    assert.equal(m.doc.nodes.length, cluster(2).nodes.length);
    assert.equal(m.doc.links.length, cluster(2).links.length);
  });
});
