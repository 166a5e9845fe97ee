/* Fabricscope pages: small progressive enhancements shared by every page (no framework).
   An ES module (base.html), so its names stay private to it; it exports nothing. */

function typingInField(el) {
  return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
}

// "/" focuses the page's search box (the list page's, else the first filter on the page).
document.addEventListener('keydown', function (e) {
  if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || typingInField(document.activeElement)) return;
  var box = document.querySelector('[data-search]') || document.querySelector('input[type=search]');
  if (!box) return;
  e.preventDefault();
  box.focus();
  box.select();
});

document.addEventListener('click', function (e) {
  var close = e.target.closest('[data-dismiss]');
  if (close) close.closest('.flash').remove();
  var copy = e.target.closest('[data-copy]');
  if (copy) {
    var src = document.querySelector(copy.getAttribute('data-copy'));
    if (src && navigator.clipboard) {
      navigator.clipboard.writeText(src.textContent.trim()).then(function () { copy.textContent = 'Copied'; });
    }
  }
});

// Forms that ask before doing something destructive.
document.addEventListener('submit', function (e) {
  var msg = e.target.getAttribute('data-confirm');
  if (msg && !window.confirm(msg)) e.preventDefault();
});

// Selects that apply at once (sort order, host picker).
document.querySelectorAll('select[data-autosubmit]').forEach(function (sel) {
  sel.addEventListener('change', function () { sel.form.submit(); });
});

// New-topology page: show only the fields of the chosen source.
var sourceSwitch = document.querySelector('[data-source-switch]');
if (sourceSwitch) {
  var apply = function () {
    var checked = sourceSwitch.querySelector('input:checked');
    var value = checked ? checked.value : 'cluster';
    document.querySelectorAll('[data-show-for]').forEach(function (el) {
      el.classList.toggle('is-hidden', el.getAttribute('data-show-for').split(' ').indexOf(value) < 0);
    });
  };
  sourceSwitch.addEventListener('change', apply);
  apply();
}

// Success messages fade away; errors stay until dismissed.
setTimeout(function () {
  document.querySelectorAll('.flash-success, .flash-info').forEach(function (el) {
    el.style.transition = 'opacity .4s'; el.style.opacity = '0';
    setTimeout(function () { el.remove(); }, 450);
  });
}, 6000);
