// Page behaviour that would otherwise sit inline in the templates: the Content-Security-Policy
// allows scripts from /static only (no inline handlers, no eval), so it all lives here.

// Bars sized from the numbers the server put in data attributes (memory chart).
function sizeBars(root) {
  root.querySelectorAll("[data-width]").forEach((el) => { el.style.width = `${el.dataset.width}%`; });
  root.querySelectorAll("[data-left]").forEach((el) => { el.style.left = `${el.dataset.left}%`; });
}
document.addEventListener("DOMContentLoaded", () => sizeBars(document));
document.addEventListener("htmx:load", (event) => sizeBars(event.target));

// Record form: a new measurement row gets the next index.
document.addEventListener("htmx:configRequest", (event) => {
  if (event.detail.elt.id !== "add-row") return;
  event.detail.parameters.index = document.querySelectorAll("#measurement-rows tr.measurement-row").length;
});

// Record form: say why a submission was not taken (htmx does not swap error responses), in
// the words the page carries for each status (data-error-413, ...), in its language.
document.addEventListener("htmx:responseError", (event) => {
  const form = event.detail.elt.closest && event.detail.elt.closest("#record-form");
  const slot = form && form.querySelector("#request-error");
  if (!slot) return;
  const status = event.detail.xhr.status;
  const words = slot.dataset[`error${status}`] || slot.dataset.errorOther || "";
  slot.textContent = words.replace("{status}", String(status));
});

// Record form: after a refused submit the form is swapped in place, wherever the reader had
// scrolled to (the submit button, at the bottom): bring the summary of what to fix into view.
document.addEventListener("htmx:afterSettle", (event) => {
  const errors = document.querySelector("#record-form #form-errors");
  if (!errors || !event.detail.elt || event.detail.elt.id !== "record-form") return;
  errors.scrollIntoView({ block: "start" });
  errors.focus({ preventScroll: true });
});

// Device selector: typing or changing a figure asks for a new answer; picking hardware
// (other than "custom", which only opens the fields) re-renders the whole form.
function selectorEvent(event, name) {
  const form = event.target.closest && event.target.closest("#selector-form");
  if (!form || event.target.name === "hardware" || typeof htmx === "undefined") return;
  htmx.trigger(form, name);
}
document.addEventListener("input", (event) => selectorEvent(event, "selector-input"));
document.addEventListener("change", (event) => {
  selectorEvent(event, "selector-change");
  const select = event.target;
  if (select.id !== "selector-hardware" || typeof htmx === "undefined") return;
  if (select.dataset.catalogCard === "true" || select.value !== select.dataset.custom) {
    htmx.trigger(select, "hardware-pick");
  }
});

// Tables narrower than their figures (a phone, mostly): each row becomes a card of labelled
// figures, each cell under its column's name, rather than a grid cut at the window's edge.
// A table that fits stays a grid; one the server already words as cards (.stack) is left.
function columnNames(table) {
  const grid = [];
  const rows = table.tHead ? Array.from(table.tHead.rows) : [];
  rows.forEach((row, r) => {
    grid[r] = grid[r] || [];
    let c = 0;
    Array.from(row.cells).forEach((cell) => {
      while (grid[r][c] !== undefined) c += 1;
      const text = cell.textContent.trim().replace(/\s+/g, " ");
      for (let dr = 0; dr < (cell.rowSpan || 1); dr += 1) {
        grid[r + dr] = grid[r + dr] || [];
        for (let dc = 0; dc < (cell.colSpan || 1); dc += 1) grid[r + dr][c + dc] = text;
      }
      c += cell.colSpan || 1;
    });
  });
  const width = Math.max(0, ...grid.map((names) => names.length));
  const names = [];
  for (let c = 0; c < width; c += 1) {
    const parts = [];
    grid.forEach((row) => { if (row[c] && parts[parts.length - 1] !== row[c]) parts.push(row[c]); });
    names.push(parts.join(" · "));
  }
  return names;
}

function labelCells(table) {
  const names = columnNames(table);
  Array.from(table.tBodies).forEach((body) => Array.from(body.rows).forEach((row) => {
    let column = 0;
    Array.from(row.cells).forEach((cell) => {
      if (!cell.hasAttribute("data-label") && names[column]) cell.setAttribute("data-label", names[column]);
      column += cell.colSpan || 1;
    });
  }));
}

function fitTables(root) {
  root.querySelectorAll("table.table:not(.stack)").forEach((table) => {
    table.classList.remove("stacked");
    const box = table.parentElement.getBoundingClientRect();
    if (table.scrollWidth > table.clientWidth + 1 || table.getBoundingClientRect().right > box.right + 1) {
      labelCells(table);
      table.classList.add("stacked");
    }
  });
}
document.addEventListener("DOMContentLoaded", () => fitTables(document));
window.addEventListener("load", () => fitTables(document));  // once fonts and images are in
document.addEventListener("htmx:load", () => fitTables(document));
document.addEventListener("toggle", () => fitTables(document), true);  // a fold opened
let fitTimer = null;
window.addEventListener("resize", () => { clearTimeout(fitTimer); fitTimer = setTimeout(() => fitTables(document), 100); });
