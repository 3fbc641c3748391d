// Home page: filter the model list in the browser, and keep the filter in the URL so the
// link shows the same list. Without JavaScript every model is listed.
(() => {
  const form = document.getElementById("model-filters");
  if (!form) return;
  const rows = [...document.querySelectorAll("#model-index tbody tr[data-model]")];
  const none = document.getElementById("no-models");
  const count = document.getElementById("model-count");

  function apply() {
    const words = form.q.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const wanted = { publisher: form.publisher.value, kind: form.kind.value, size: form.size.value };
    let shown = 0;
    for (const row of rows) {
      const match = words.every((w) => row.dataset.search.includes(w))
        && Object.entries(wanted).every(([key, value]) => !value || row.dataset[key] === value);
      row.hidden = !match;
      if (match) shown += 1;
    }
    none.hidden = shown > 0;
    // The words come from the page, in its language: "{shown} of {total} models".
    count.textContent = count.dataset.shownOf
      .replace("{shown}", shown).replace("{total}", rows.length);
    const query = new URLSearchParams([...new FormData(form)].filter(([, v]) => v));
    history.replaceState(null, "", query.toString() ? `?${query}` : location.pathname);
  }

  const params = new URLSearchParams(location.search);
  for (const name of ["q", "publisher", "kind", "size"]) {
    if (params.has(name)) form.elements[name].value = params.get(name);
  }
  form.addEventListener("input", apply);
  form.addEventListener("submit", (event) => { event.preventDefault(); apply(); });
  apply();
})();
