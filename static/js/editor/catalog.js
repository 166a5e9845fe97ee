/* Fabricscope editor — catalog access (link technologies, node kinds). Pure: no DOM. */
import { KINDS, naturalCompare } from './model.js';

const FAMILY_LABEL = {
  pcie: 'PCIe', nvlink: 'NVLink', inter_socket: 'Inter-socket (UPI / xGMI)', memory: 'Memory (DDR)',
  ethernet: 'Ethernet', infiniband: 'InfiniBand', cxl: 'CXL', other: 'Other',
};
const FAMILY_ORDER = ['nvlink', 'pcie', 'inter_socket', 'memory', 'infiniband', 'ethernet'];

/** Accepts the engine's catalog_as_dict() shape ({techs: {name: {...}}}) or a list of techs. */
export class Catalog {
  constructor(raw) {
    raw = raw || {};
    const techs = Array.isArray(raw.techs) ? raw.techs : Object.entries(raw.techs || {}).map(([name, t]) => ({ name, ...t }));
    this.basis = raw.basis_default === 'raw' ? 'raw' : 'effective';
    this.techs = new Map();
    for (const t of techs) {
      const raw_ = num(t.raw_gbps, t.raw_capacity_gbps, t.capacity_raw_gbps, t.capacity_gbps);
      const eff = num(t.effective_gbps, t.effective_capacity_gbps, t.capacity_effective_gbps, raw_);
      this.techs.set(t.name, {
        name: t.name, family: t.family || 'other', label: t.label || t.name,
        raw: raw_, effective: eff, latency: num(t.latency_ns, 0), width: t.width || 1,
      });
    }
    const kinds = raw.node_kinds;
    this.nodeKinds = kinds ? (Array.isArray(kinds) ? kinds.map((k) => (typeof k === 'string' ? k : k.name)) : Object.keys(kinds)) : KINDS.slice();
    this.kindInfo = kinds && !Array.isArray(kinds) ? kinds : {};
    this.groupKinds = raw.group_kinds ? Object.keys(raw.group_kinds) : ['host', 'rack', 'pod', 'row', 'cluster', 'plane', 'other'];
  }

  tech(name) { return name ? this.techs.get(name) || null : null; }
  capacity(name, basis) { const t = this.tech(name); return t ? (basis === 'raw' ? t.raw : basis === 'effective' ? t.effective : this.basis === 'raw' ? t.raw : t.effective) : null; }

  /** [[familyLabel, [tech...]], ...] in a stable, useful order. */
  grouped() {
    const fam = new Map();
    for (const t of this.techs.values()) {
      if (!fam.has(t.family)) fam.set(t.family, []);
      fam.get(t.family).push(t);
    }
    const order = [...fam.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    return order.map((f) => [FAMILY_LABEL[f] || f, fam.get(f).sort((a, b) => naturalCompare(a.name, b.name))]);
  }
}

function rank(f) { const i = FAMILY_ORDER.indexOf(f); return i < 0 ? 99 : i; }
function num(...xs) { for (const x of xs) if (x != null && isFinite(Number(x))) return Number(x); return null; }
