// Copy buttons: put the command on the clipboard and say so on the button, in the page's
// language: the button carries its words (data-copied), rendered by the server.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const text = button.dataset.copy;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = document.createElement("textarea");
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  if (!button.dataset.label) button.dataset.label = button.textContent;
  button.textContent = button.dataset.copied || button.dataset.label;
  setTimeout(() => { button.textContent = button.dataset.label; }, 1500);
});
