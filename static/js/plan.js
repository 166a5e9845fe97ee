/* The floor-plan page's hand moves (an ES module; templates/designer/plan.html).
 * Both paths fill the same form (#move-form: device, rack, unit) and submit it; the server checks
 * the move, saves it and recomputes the plan, or answers a located error and saves nothing.
 * - Drag and drop: a device of the elevation onto a rack; the unit is where its top edge lands
 *   (U1 at the bottom). Dropped over another device, the unit is left empty: the server puts it
 *   in the rack's lowest free units, or says the rack is full.
 * - Keyboard: Enter or Space on a device picks it in the Device list and focuses the rack list;
 *   Enter in either list (or the unit box) moves it.
 */

const form = document.getElementById('move-form');

function pick(id) {
  const select = form.querySelector('#id_device');
  select.value = id;
  form.querySelector('#id_position').value = '';
}

function occupied(box, skip) {
  return [...box.querySelectorAll('.dev')].filter((d) => d.dataset.id !== skip)
    .map((d) => [Number(d.dataset.pos), Number(d.dataset.pos) + Number(d.dataset.units) - 1]);
}

/* The lowest unit of ``dev`` when its top edge lands ``topPx`` below the top of ``box``; null
 * when those units are taken (the server then chooses). Pixels per unit from the box's height. */
function unitAt(box, dev, topPx) {
  const units = Number(box.dataset.units);
  const size = Number(dev.dataset.units);
  const perU = box.clientHeight / units;
  const topU = units - Math.floor(Math.max(0, topPx) / perU);
  const low = Math.min(Math.max(topU - size + 1, 1), units - size + 1);
  const high = low + size - 1;
  const clash = occupied(box, dev.dataset.id).some(([a, b]) => a <= high && low <= b);
  return clash ? null : low;
}

function submitMove(id, rack, position) {
  pick(id);
  form.querySelector('#id_rack').value = rack;
  form.querySelector('#id_position').value = position === null ? '' : String(position);
  form.requestSubmit();
}

function wireDrag() {
  let dragged = null;
  let grabPx = 0;
  for (const dev of document.querySelectorAll('#plan-racks .dev[draggable="true"]')) {
    dev.addEventListener('dragstart', (event) => {
      dragged = dev;
      grabPx = event.offsetY || 0;
      event.dataTransfer.setData('text/plain', dev.dataset.id);
      event.dataTransfer.effectAllowed = 'move';
      dev.classList.add('dragging');
    });
    dev.addEventListener('dragend', () => {
      dev.classList.remove('dragging');
      document.querySelectorAll('.rack-box.drop-target').forEach((b) => b.classList.remove('drop-target'));
    });
  }
  for (const box of document.querySelectorAll('#plan-racks .rack-box')) {
    box.addEventListener('dragover', (event) => {
      if (!dragged) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = 'move';
      box.classList.add('drop-target');
    });
    box.addEventListener('dragleave', () => box.classList.remove('drop-target'));
    box.addEventListener('drop', (event) => {
      event.preventDefault();
      if (!dragged) return;
      const top = event.clientY - box.getBoundingClientRect().top - box.clientTop - grabPx;
      submitMove(dragged.dataset.id, box.dataset.rack, unitAt(box, dragged, top));
      dragged = null;
    });
  }
}

function wireKeys() {
  for (const dev of document.querySelectorAll('#plan-racks .dev[tabindex]')) {
    const choose = () => {
      pick(dev.dataset.id);
      form.querySelector('#id_rack').focus();
      form.scrollIntoView({ block: 'nearest' });
    };
    dev.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        choose();
      }
    });
    dev.addEventListener('click', choose);
  }
  // A <select> does not submit its form on Enter by itself.
  for (const select of form.querySelectorAll('select')) {
    select.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        event.preventDefault();
        form.requestSubmit();
      }
    });
  }
}

if (form) {
  wireDrag();
  wireKeys();
}
