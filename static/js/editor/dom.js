/* Fabricscope editor — DOM helpers: h() to build elements, appendAll, download, kind labels. */

export const KIND_LABEL = {
  gpu: 'GPU', cpu: 'CPU socket', memory: 'Memory', pcie_switch: 'PCIe switch', nvswitch: 'NVSwitch',
  nic: 'NIC', nvme: 'NVMe', switch: 'Switch', storage: 'Storage',
};

/** Create an element: h("button", {class, onclick, ...}, ...children). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) if (c != null && c !== false) el.append(c.nodeType ? c : document.createTextNode(String(c)));
  return el;
}

/** Element.append() would print "null" for the optional parts we leave out. */
export function appendAll(parent, ...children) {
  for (const c of children.flat()) if (c != null && c !== false) parent.append(c);
}

/** Save a Blob as a file through a temporary link. */
export function download(name, blob) {
  const a = h('a', { href: URL.createObjectURL(blob), download: name });
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 5000);
}
