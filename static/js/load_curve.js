// The detail page's curve: each request's decode speed (y) against the total throughput
// (x), the estimate as a band and the records' medians on top (Chart.js, vendored). The
// figures come from the page; a price per GPU-hour (a cookie) turns each point's GPU-hours
// per million output tokens into its cost.
document.addEventListener("DOMContentLoaded", () => {
  const source = document.getElementById("load-curve-data");
  const canvas = document.getElementById("load-curve-chart");
  if (!source || !canvas || typeof Chart === "undefined") return;
  const data = JSON.parse(source.textContent);
  const words = JSON.parse(document.getElementById("load-curve-words").textContent);
  const lang = document.documentElement.lang || "en";
  const number = (value, digits) => new Intl.NumberFormat(lang, {
    minimumFractionDigits: digits, maximumFractionDigits: digits,
  }).format(value);
  const price = () => (window.servebookGpuPrice ? window.servebookGpuPrice() : null);
  const cost = (hours) => {
    const found = price();
    // As the JSON rounds it: the price times the GPU-hours, to four decimals.
    return found !== null && hours ? Math.round(found * hours * 1e4) / 1e4 : null;
  };
  const costWords = (hours) => {
    const value = cost(hours);
    return value === null ? null : words.cost.replace("{cost}", number(value, 2));
  };
  const end = (side) => data.estimated.map((p) => ({
    x: p.throughput_tokens_per_s[side], y: p.decode_tokens_per_s[side],
    c: p.concurrency, h: p.gpu_hours_per_million_output_tokens,
  }));
  const measured = data.measured.map((p) => ({
    x: p.throughput_tokens_per_s.median, y: p.decode_tokens_per_s.median,
    c: p.concurrency, h: p.gpu_hours_per_million_output_tokens,
  }));
  const band = "rgba(59, 111, 196, 0.18)";
  // The band between the two ends: along the low end, back along the high end. (Chart.js's
  // own fill between datasets pairs points by x, and the two ends share none.)
  const bandFill = {
    id: "bandFill",
    beforeDatasetsDraw(chart) {
      const low = chart.getDatasetMeta(0).data;
      const high = chart.getDatasetMeta(1).data;
      if (!low.length || !chart.isDatasetVisible(0) || !chart.isDatasetVisible(1)) return;
      const { ctx } = chart;
      ctx.save();
      ctx.beginPath();
      low.forEach((point, index) => (index ? ctx.lineTo(point.x, point.y) : ctx.moveTo(point.x, point.y)));
      [...high].reverse().forEach((point) => ctx.lineTo(point.x, point.y));
      ctx.closePath();
      ctx.fillStyle = band;
      ctx.fill();
      ctx.restore();
    },
  };
  const chart = new Chart(canvas, {
    type: "scatter",
    data: {
      datasets: [
        { label: words.estimate_low, data: end("low"), showLine: true, borderColor: "#3b6fc4", pointRadius: 2 },
        { label: words.estimate_high, data: end("high"), showLine: true, borderColor: "#3b6fc4", backgroundColor: band, pointRadius: 2 },
        { label: words.measured, data: measured, borderColor: "#1a7f37", backgroundColor: "#1a7f37", pointRadius: 5, pointStyle: "rectRot" },
      ],
    },
    plugins: [bandFill],
    options: {
      animation: false,
      parsing: false,
      scales: {
        x: { type: "linear", beginAtZero: true, title: { display: true, text: words.x } },
        y: { beginAtZero: true, title: { display: true, text: words.y } },
      },
      plugins: {
        tooltip: {
          callbacks: {
            label: (item) => {
              const point = words.point.replace("{concurrency}", number(item.raw.c, 0))
                .replace("{decode}", number(item.raw.y, 1)).replace("{throughput}", number(item.raw.x, 0));
              const priced = costWords(item.raw.h);
              return priced ? [point, priced] : point;
            },
          },
        },
      },
    },
  });
  const fillCosts = () => {
    document.querySelectorAll("#load-curve-points tr.curve-point").forEach((row) => {
      const value = cost(Number.parseFloat(row.dataset.gpuHours));
      const cell = row.querySelector(".cost");
      cell.textContent = value === null ? "—" : number(value, 2);
      if (value === null) delete row.dataset.cost; else row.dataset.cost = value;
    });
    chart.update();
  };
  document.addEventListener("gpu-price", fillCosts);
  fillCosts();
  document.getElementById("load-curve").dataset.chartReady = "true";
});
