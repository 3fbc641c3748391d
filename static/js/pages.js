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
