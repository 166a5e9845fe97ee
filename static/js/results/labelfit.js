/* Labels that fit: the rule of designer/figures/style.py LABEL_FIT, whose numbers come with the
 * page's style JSON (#fs-style `label_fit`: {box: {char_px, pad_px}, node: {char_px, pad_px}}).
 * The figures chose their labels with the same rule; results.js redoes it at every zoom.
 * Pure: unit-tested under Node against the case table Python's test also checks. */

/** Whether `text` fits `widthPx` by `rule` ({char_px, pad_px}). Characters are counted as Python
 * counts them (code points), so both sides agree on every label. */
export function textFits(rule, text, widthPx) {
  return [...text].length * rule.char_px + rule.pad_px <= widthPx;
}

/** The longest of `full`, `short` or '' that fits `widthPx` (a host box's label). */
export function fitText(rule, widthPx, full, short) {
  if (textFits(rule, full, widthPx)) return full;
  return textFits(rule, short, widthPx) ? short : '';
}

/** Whether node label `label` fits `gap` data units at `ppu` px per unit. */
export function labelFits(rule, label, gap, ppu) {
  return !!label && textFits(rule, label, gap * ppu);
}
