// Draw a record's charts from the JSON the page embeds (Chart.js, vendored).
document.addEventListener("DOMContentLoaded", () => {
  const source = document.getElementById("chart-data");
  if (!source || typeof Chart === "undefined") return;
  const data = JSON.parse(source.textContent);
  // The words come from the page, in its language.
  const words = JSON.parse(document.getElementById("chart-words").textContent);
  const context = document.getElementById("chart-context");
  if (context && data.by_context.context.length) {
    new Chart(context, {
      type: "line",
      data: {
        labels: data.by_context.context,
        datasets: [
          { label: words.ttft, data: data.by_context.ttft_ms, yAxisID: "ttft", borderColor: "#3b6fc4" },
          { label: words.decode, data: data.by_context.decode_tokens_per_s, yAxisID: "decode", borderColor: "#1a7f37" },
        ],
      },
      options: {
        animation: false,
        scales: {
          x: { title: { display: true, text: words.context } },
          ttft: { position: "left", title: { display: true, text: words.ttft }, beginAtZero: true },
          decode: { position: "right", title: { display: true, text: words.decode }, beginAtZero: true, grid: { drawOnChartArea: false } },
        },
      },
    });
  }
  const ramp = document.getElementById("chart-ramp");
  if (ramp && data.ramp.length) {
    new Chart(ramp, {
      type: "line",
      data: {
        datasets: [{
          label: words.throughput,
          data: data.ramp.map((p) => ({ x: p.latency_ms, y: p.throughput_tokens_per_s, c: p.concurrency })),
          borderColor: "#7d5fd3",
          showLine: true,
        }],
      },
      options: {
        animation: false,
        parsing: false,
        scales: {
          x: { type: "linear", title: { display: true, text: words.latency }, beginAtZero: true },
          y: { title: { display: true, text: words.throughput_axis }, beginAtZero: true },
        },
        plugins: { tooltip: { callbacks: { label: (item) => words.point
          .replace("{streams}", item.raw.c).replace("{speed}", item.raw.y.toFixed(1))
          .replace("{latency}", item.raw.x.toFixed(0)) } } },
      },
    });
  }
  document.body.dataset.chartsReady = "true";
});
