// Compare two records: checking a third unchecks the one checked first.
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("compare-form");
  if (!form) return;
  const button = document.getElementById("compare-button");
  const order = [...form.querySelectorAll("input[name=compare]:checked")];
  const sync = () => { button.disabled = order.length !== 2; };
  form.addEventListener("change", (event) => {
    const box = event.target;
    if (box.name !== "compare") return;
    const at = order.indexOf(box);
    if (at >= 0) order.splice(at, 1);
    if (box.checked) order.push(box);
    while (order.length > 2) order.shift().checked = false;
    sync();
  });
  sync();
});
