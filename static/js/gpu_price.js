// The price per GPU-hour a reader types is kept in a cookie in their browser only.
// A page built with the price (data-reload) is loaded again; others hear "gpu-price".
(() => {
  const form = () => document.getElementById("gpu-price-form");
  function readPrice() {
    const found = form();
    if (!found) return null;
    const name = found.dataset.cookie;
    const pair = document.cookie.split(";").map((part) => part.trim())
      .find((part) => part.startsWith(name + "="));
    const value = pair ? Number.parseFloat(decodeURIComponent(pair.slice(name.length + 1))) : NaN;
    return Number.isFinite(value) && value > 0 ? value : null;
  }
  window.servebookGpuPrice = readPrice;
  document.addEventListener("DOMContentLoaded", () => {
    const found = form();
    if (!found) return;
    const input = found.querySelector("input");
    const price = readPrice();
    if (price !== null) input.value = price;
    found.addEventListener("submit", (event) => {
      event.preventDefault();
      const value = Number.parseFloat(input.value);
      const name = found.dataset.cookie;
      if (Number.isFinite(value) && value > 0) {
        document.cookie = `${name}=${encodeURIComponent(value)}; path=/; max-age=31536000; SameSite=Lax`;
      } else {
        document.cookie = `${name}=; path=/; max-age=0; SameSite=Lax`;
      }
      if (found.dataset.reload === "true") window.location.reload();
      else document.dispatchEvent(new CustomEvent("gpu-price", { detail: readPrice() }));
    });
  });
})();
