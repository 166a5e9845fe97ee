// The browser's label-fit rule (static/js/results/labelfit.js) gives the answers of the case
// table that tests/designer/test_label_fit.py checks the Python rule against, with the numbers
// that test proves style_json() sends (tests/fixtures/label_fit_cases.json): one rule, two
// implementations that agree.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { fitText, labelFits, textFits } from '../../static/js/results/labelfit.js';

const CASES = JSON.parse(readFileSync(new URL('../fixtures/label_fit_cases.json', import.meta.url), 'utf8'));
const RULE = CASES.label_fit;

describe('label fit (shared with designer/figures)', () => {
  it('chooses host-box labels as fit_label does', () => {
    for (const c of CASES.box) assert.equal(fitText(RULE.box, c.width_px, c.full, c.short), c.want, JSON.stringify(c));
  });

  it('shows node labels where label_fits does', () => {
    for (const c of CASES.node) assert.equal(labelFits(RULE.node, c.label, c.gap, c.ppu), c.want, JSON.stringify(c));
  });

  it('counts characters as Python does (code points, not UTF-16 units)', () => {
    assert.ok(textFits({ char_px: 10, pad_px: 0 }, 'h😀', 20));
    assert.ok(!textFits({ char_px: 10, pad_px: 0 }, 'h😀x', 20));
  });
});
