// Unit tests of the pure helpers of the job page (static/js/job.js) and the scenario builder
// (static/js/scenario.js); both modules start themselves only where there is a page.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { formatTime, progressClass, retryDelayMs, stateLabel } from '../../static/js/job.js';
import { fieldApplies, filterHidden, labelVariant, nextPatternId, renumbered, searchedOptions } from '../../static/js/scenario.js';

describe('job page', () => {
  it('formats status times in UTC', () => {
    assert.equal(formatTime('2026-03-04T14:05:09Z'), 'Mar 4, 14:05:09');
    assert.equal(formatTime(null), '—');
  });

  it('colours the progress bar by state', () => {
    assert.equal(progressClass('succeeded'), 'progress done');
    assert.equal(progressClass('failed'), 'progress failed');
    assert.equal(progressClass('cancelled'), 'progress cancelled');
    assert.equal(progressClass('running'), 'progress');
    assert.equal(progressClass('constructor'), 'progress');
  });

  it('labels the state: the server\'s label, ours, or the state', () => {
    assert.equal(stateLabel({ state: 'queued', state_label: 'Waiting' }), 'Waiting');
    assert.equal(stateLabel({ state: 'queued' }), 'Queued');
    assert.equal(stateLabel({ state: 'odd' }), 'odd');
  });

  it('backs off on a lost connection: 2, 4, 8 s, then 10 s at most', () => {
    assert.deepEqual([1, 2, 3, 4, 9].map(retryDelayMs), [2000, 4000, 8000, 10000, 10000]);
  });
});

describe('scenario builder', () => {
  it('shows a field for the kinds it lists, and its selector when it names one', () => {
    assert.ok(fieldApplies('all_reduce all_gather', null, 'all_gather', 'all'));
    assert.ok(!fieldApplies('all_reduce', null, 'kv_transfer', 'all'));
    assert.ok(fieldApplies('all_reduce', 'group', 'all_reduce', 'group'));
    assert.ok(!fieldApplies('all_reduce', 'group', 'all_reduce', 'all'));
    assert.ok(fieldApplies('all_reduce', '', 'all_reduce', 'all'));
  });

  it('picks the label variant of a kind', () => {
    assert.deepEqual(['kv_transfer', 'storage_read', 'storage_write', 'all_reduce'].map(labelVariant), ['kv', 'storage', 'storage', null]);
  });

  it('renumbers formset names and finds a free pattern id', () => {
    assert.equal(renumbered('pattern-3-kind', 1), 'pattern-1-kind');
    assert.equal(renumbered('id_pattern-__prefix__-size', 4), 'id_pattern-4-size');
    assert.equal(nextPatternId(new Set(['p1', 'p2', 'p4'])), 'p3');
    assert.equal(nextPatternId(new Set()), 'p1');
  });

  it('filters failure targets by text, always showing the picked ones', () => {
    assert.equal(filterHidden('h0/gpu0 · gpu', false, 'gpu0'), false);
    assert.equal(filterHidden('leaf0 · switch', false, 'gpu0'), true);
    assert.equal(filterHidden('leaf0 · switch', true, 'gpu0'), false);
    assert.equal(filterHidden('leaf0 · switch', false, ''), false);
  });

  it('keeps the picked failure targets first when search results replace the list', () => {
    const picked = [{ value: 'h0/nic0', label: 'h0/nic0 · nic', selected: true }];
    const results = [{ id: 'h0/gpu0', label: 'h0/gpu0 · gpu' }, { id: 'h0/nic0', label: 'h0/nic0 · nic' }];
    assert.deepEqual(searchedOptions(picked, results), [
      picked[0], { value: 'h0/gpu0', label: 'h0/gpu0 · gpu', selected: false }]);
    assert.deepEqual(searchedOptions([], []), []);
  });
});
