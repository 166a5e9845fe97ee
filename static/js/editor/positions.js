/* Fabricscope editor — the automatic layout's positions.
 *
 * A Map's reading side (get, has, size, iteration in the order things were placed) over single
 * positions and whole host blocks placed at an offset. A block whose devices are `<host>/<local
 * id>` in its shape's order is kept as the block, and a device's position is worked out when it
 * is asked for: a 100,000-GPU design has 629k devices in 12,500 hosts of one shape, and the
 * first frame draws 26 boxes — building 629k [x, y] arrays first was a third of the layout's time.
 *
 * Pure: no DOM, unit-tested under Node (tests/js/layout.test.mjs).
 */
export class Positions {
  constructor() {
    this.single = new Map();   // id -> [x, y]
    this.blocks = new Map();   // host prefix "<host>/" -> placed block
    this.order = [];           // ids and placed blocks, as placed (the iteration order)
    this.blockCount = 0;       // devices in the placed blocks
  }

  /** Place one device. */
  set(id, pos) {
    // A device already placed keeps its place in the order, as in a Map; a block one of whose
    // devices is placed again no longer answers for all of them (blockBounds).
    if (!this.single.has(id)) {
      const placed = this.placing(id);
      if (placed === undefined) this.order.push(id); else placed.moved = true;
    }
    this.single.set(id, pos);
    return this;
  }

  /**
   * Place a host's block with its top-centre at (cx, top). `block.local` (its devices' ids with
   * `block.prefix` taken off, in order) and `block.index` (local id -> row) mark a block kept
   * whole; any other block is placed device by device.
   */
  setBlock(block, cx, top) {
    if (!block.local || this.blocks.has(block.prefix) || this.anySingle(block.ids)) {
      for (let i = 0; i < block.ids.length; i += 1) this.set(block.ids[i], [Math.round(cx + block.pts[i][0]), Math.round(top + block.pts[i][1])]);
      return;
    }
    const placed = { block, cx, top };
    this.blocks.set(block.prefix, placed);
    this.order.push(placed);
    this.blockCount += block.ids.length;
  }

  get(id) {
    const pos = this.single.get(id);
    return pos !== undefined ? pos : this.fromBlock(id);
  }

  /** Whether a device of `ids` was placed on its own already (its block is then placed device by
   * device, so a later placement wins and the order stays a Map's). */
  anySingle(ids) {
    if (!this.single.size) return false;
    for (const id of ids) if (this.single.has(id)) return true;
    return false;
  }

  /** The position of `id` in a placed block, or undefined (also for an id that is no string: an
   * imported file is drawn before the server has checked it). */
  fromBlock(id) {
    if (!this.blocks.size || typeof id !== 'string') return undefined;
    for (let cut = id.indexOf('/'); cut >= 0; cut = id.indexOf('/', cut + 1)) {
      const placed = this.blocks.get(id.slice(0, cut + 1));
      if (placed === undefined) continue;
      const row = placed.block.index.get(id.slice(cut + 1));
      if (row !== undefined) return at(placed, row);
    }
    return undefined;
  }

  /** The placed block holding `id`, or undefined. */
  placing(id) {
    if (!this.blocks.size || typeof id !== 'string') return undefined;
    for (let cut = id.indexOf('/'); cut >= 0; cut = id.indexOf('/', cut + 1)) {
      const placed = this.blocks.get(id.slice(0, cut + 1));
      if (placed !== undefined && placed.block.index.has(id.slice(cut + 1))) return placed;
    }
    return undefined;
  }

  /**
   * The bounds {x0, x1, y0, y1} of `ids` when they are exactly the devices of the block placed
   * for `prefix` and none was placed again on its own, else null: a collapsed pod's box spans
   * its hosts' blocks, 50 devices each read at once instead of one by one (629k at 100,000 GPUs).
   */
  blockBounds(prefix, ids) {
    const placed = this.blocks.get(prefix);
    if (placed === undefined || placed.moved || placed.block.ids.length !== ids.length) return null;
    // A block of a shorter prefix ("a/" beside "a/b/") may answer for some of these ids first
    // (fromBlock tries the shortest prefix first): read them one by one then.
    for (let cut = prefix.indexOf('/'); cut >= 0 && cut < prefix.length - 1; cut = prefix.indexOf('/', cut + 1)) {
      if (this.blocks.has(prefix.slice(0, cut + 1))) return null;
    }
    const { block, cx, top } = placed;
    for (let i = 0; i < ids.length; i += 1) if (block.ids[i] !== ids[i]) return null;
    let extent = EXTENTS.get(block.pts);
    if (extent === undefined) EXTENTS.set(block.pts, (extent = extentOf(block.pts)));
    // Math.round keeps order: the rounded extremes are the extremes of the rounded positions.
    return { x0: Math.round(cx + extent[0]), x1: Math.round(cx + extent[1]),
      y0: Math.round(top + extent[2]), y1: Math.round(top + extent[3]) };
  }

  has(id) { return this.get(id) !== undefined; }

  get size() {
    let moved = 0; // devices of a block set again one by one are counted once
    if (this.blocks.size) for (const id of this.single.keys()) if (this.fromBlock(id) !== undefined) moved += 1;
    return this.single.size + this.blockCount - moved;
  }

  * [Symbol.iterator]() {
    for (const item of this.order) {
      if (typeof item === 'string') { yield [item, this.single.get(item)]; continue; }
      const { ids } = item.block;
      for (let i = 0; i < ids.length; i += 1) yield [ids[i], this.single.get(ids[i]) || at(item, i)];
    }
  }
}

const EXTENTS = new WeakMap();   // a block shape's pts -> [x0, x1, y0, y1], shared by its hosts

function extentOf(pts) {
  const e = [Infinity, -Infinity, Infinity, -Infinity];
  for (const [x, y] of pts) {
    e[0] = Math.min(e[0], x); e[1] = Math.max(e[1], x);
    e[2] = Math.min(e[2], y); e[3] = Math.max(e[3], y);
  }
  return e;
}

function at({ block, cx, top }, row) {
  const p = block.pts[row];
  return [Math.round(cx + p[0]), Math.round(top + p[1])];
}
