// Draw a record's charts from the JSON the page embeds (Chart.js, vendored).
document.addEventListener("DOMContentLoaded", () => {
  const source = document.getElementById("chart-data");
  if (!source || typeof Chart === "undefined") return;
  const data = JSON.parse(source.textContent);
  const context = document.getElementById("chart-context");
  if (context && data.by_context.context.length) {
    new Chart(context, {
      type: "line",
      data: {
        labels: data.by_context.context,
        datasets: [
          { label: "TTFT (ms)", data: data.by_context.ttft_ms, yAxisID: "ttft", borderColor: "#3b6fc4" },
          { label: "Decode (tok/s)", data: data.by_context.decode_tokens_per_s, yAxisID: "decode", borderColor: "#1a7f37" },
        ],
      },
      options: {
        animation: false,
        scales: {
          x: { title: { display: true, text: "context length (tokens)" } },
          ttft: { position: "left", title: { display: true, text: "TTFT (ms)" }, beginAtZero: true },
          decode: { position: "right", title: { display: true, text: "decode (tok/s)" }, beginAtZero: true, grid: { drawOnChartArea: false } },
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
          label: "total output throughput",
          data: data.ramp.map((p) => ({ x: p.latency_ms, y: p.throughput_tokens_per_s, c: p.concurrency })),
          borderColor: "#7d5fd3",
          showLine: true,
        }],
      },
      options: {
        animation: false,
        parsing: false,
        scales: {
          x: { type: "linear", title: { display: true, text: "per-request latency, p50 end to end (ms)" }, beginAtZero: true },
          y: { title: { display: true, text: "throughput (tok/s)" }, beginAtZero: true },
        },
        plugins: { tooltip: { callbacks: { label: (item) => `${item.raw.c} streams: ${item.raw.y.toFixed(1)} tok/s at ${item.raw.x.toFixed(0)} ms` } } },
      },
    });
  }
  document.body.dataset.chartsReady = "true";
});
